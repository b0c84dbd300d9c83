import Foundation
import QuireHTTP
import QuireTesting
import Testing

@testable import QuireAPI

/// The web client and the demo page, served from the binary (openapi.yaml; issue 13). What they do in a
/// browser is `scripts/browser-test`'s; this is how they are served.
@Suite("Static files: quire.js and the demo page")
struct StaticFilesTests {
    /// A service for one test, and a `GET` on it.
    final class Fixture {
        let service = QuireService(configuration: .testing, logger: TestServer.logger)

        init() throws { try service.startAndLoad() }
        deinit { service.shutdown() }

        func get(_ path: String, method: String = "GET", headers: [(String, String)] = []) throws -> ClientResponse {
            try TestServer(running: service.server).request(method, path, headers: headers)
        }
    }

    @Test(
        "each file is served with its media type, a tag from its bytes, its Cache-Control, and 304 for that tag",
        arguments: [
            ("/client/quire.js", "text/javascript", "max-age=86400"),
            ("/client/demo.js", "text/javascript", "max-age=86400"),
            ("/client/demo.css", "text/css", "max-age=86400"),
            ("/demo", "text/html", "no-cache"),
        ])
    func served(path: String, type: String, cacheControl: String) throws {
        let fixture = try Fixture()
        let get = fixture.get
        let response = try get(path, "GET", [])
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"]?.hasPrefix(type) == true)
        #expect(response.headers["Cache-Control"] == cacheControl)
        #expect(response.headers["X-Content-Type-Options"] == "nosniff")
        let tag = try #require(response.headers["ETag"])
        #expect(tag == CachePolicy.entityTag(of: response.body))
        #expect(!response.body.isEmpty)
        let again = try get(path, "GET", [("If-None-Match", tag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
    }

    @Test("the demo page: a strict Content-Security-Policy, no inline script or style, versioned asset URLs")
    func demoPage() throws {
        let fixture = try Fixture()
        let get = { try fixture.get($0) }
        let page = try get("/demo?list=demo")
        let policy = try #require(page.headers["Content-Security-Policy"])
        #expect(policy.contains("script-src 'self'"))
        #expect(policy.contains("style-src 'self'"))
        #expect(policy.contains("default-src 'none'"))
        #expect(!policy.contains("unsafe-inline"))
        #expect(!policy.contains("unsafe-eval"))
        let html = page.text
        // Every script has a src, no <style> element, no style or on* attribute.
        #expect(html.ranges(of: "<script").count == html.ranges(of: "<script type=\"module\" src=").count)
        #expect(!html.contains("<style"))
        #expect(html.firstMatch(of: /\s(style|on[a-z]+)=/) == nil)
        // The assets are named with the tags they are served with, so their long-lived caching stays exact.
        for asset in ["/client/demo.js", "/client/demo.css"] {
            let tag = try #require(get(asset).headers["ETag"]).filter { $0 != "\"" }
            #expect(html.contains("\(asset)?v=\(tag)"), "\(asset) named with its tag")
        }
        let script = try get("/client/demo.js").text
        let clientTag = try #require(get("/client/quire.js").headers["ETag"]).filter { $0 != "\"" }
        #expect(script.contains("./quire.js?v=\(clientTag)"))
        #expect(!script.contains("@version("))
    }

    @Test("list data is rendered as text: neither script assigns innerHTML or outerHTML or calls insertAdjacentHTML")
    func noMarkupFromData() throws {
        let fixture = try Fixture()
        let get = { try fixture.get($0) }
        for path in ["/client/quire.js", "/client/demo.js"] {
            let script = try get(path).text
            #expect(!script.contains("innerHTML"), "\(path)")
            #expect(!script.contains("outerHTML"), "\(path)")
            #expect(!script.contains("insertAdjacentHTML"), "\(path)")
            #expect(!script.contains("eval("), "\(path)")
        }
    }

    @Test("HEAD answers the headers of GET")
    func head() throws {
        let fixture = try Fixture()
        let response = try fixture.get("/client/quire.js", method: "HEAD")
        #expect(response.status == 200)
        #expect(response.headers["ETag"] != nil)
    }
}
