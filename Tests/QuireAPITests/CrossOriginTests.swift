import Foundation
import QuireHTTP
import QuireTesting
import Testing

@testable import QuireAPI

/// CORS over HTTP (`server.cors.allowedOrigins`): preflights, the fields of answers to an allowed origin (pages,
/// writes, problems, long polls, streams), none for another origin, and none at all when no origin is configured.
/// `scripts/test/cors-browser-test` runs the same in headless Chromium, where the browser enforces it.
@Suite("CORS: web pages of other origins")
struct CrossOriginTests {
    static let app = "http://app.example.test:3000"
    static let token = "cors-write-token"

    static func fixture(origins: [String] = [app]) throws -> APIFixture {
        try APIFixture { configuration in
            configuration.crossOrigin.allowedOrigins = origins
            configuration.writeToken = token
            configuration.rateLimits.enabled = true
        }
    }

    static func preflight(
        _ fixture: APIFixture, origin: String, method: String = "PUT", path: String = "/v1/lists/feed"
    ) throws -> ClientResponse {
        try fixture.call(
            "OPTIONS", path,
            headers: [
                ("Origin", origin), ("Access-Control-Request-Method", method),
                ("Access-Control-Request-Headers", "authorization,content-type"),
            ])
    }

    static func names(_ value: String?) -> Set<String> {
        Set((value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
    }

    @Test("a preflight from an allowed origin: 204, the origin echoed, methods, request fields, max-age")
    func preflightAllowed() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        for (method, path) in [("PUT", "/v1/lists/feed"), ("POST", "/v1/lists/feed/sessions"), ("GET", "/nowhere")] {
            let response = try Self.preflight(fixture, origin: Self.app, method: method, path: path)
            #expect(response.status == 204)
            #expect(response.body.isEmpty)
            #expect(response.headers["Access-Control-Allow-Origin"] == Self.app)
            #expect(response.headers.values(for: "Vary").contains("Origin"))
            #expect(
                Self.names(response.headers["Access-Control-Allow-Methods"]).isSuperset(of: [
                    "get", "put", "post", "delete",
                ]))
            #expect(
                Self.names(response.headers["Access-Control-Allow-Headers"]).isSuperset(of: [
                    "authorization", "content-type", "if-match", "if-none-match", "last-event-id", "traceparent",
                ]))
            #expect(response.headers["Access-Control-Max-Age"] == "7200")
            #expect(response.headers["Access-Control-Allow-Credentials"] == nil)
        }
    }

    @Test("a preflight from another origin gets no CORS field (routed as any OPTIONS: 405)")
    func preflightRefused() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        for origin in ["http://evil.example.test", "http://app.example.test:3001", "null"] {
            let response = try Self.preflight(fixture, origin: origin)
            #expect(response.status == 405)
            #expect(try ProblemDocument(response.body).type.hasSuffix("/method-not-allowed"))
            #expect(!response.headers.contains { $0.name.lowercased().hasPrefix("access-control-") })
        }
    }

    @Test("answers to an allowed origin name it and expose ETag, Link, Location, RateLimit, Retry-After")
    func actualRequests() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        let origin = [("Origin", Self.app)]
        let auth = ("Authorization", "Bearer \(Self.token)")
        let put = try fixture.call(
            "PUT", "/v1/lists/feed", json: listDocument(sections: 2, items: 30), headers: origin + [auth])
        #expect(put.status == 201)
        let page = try fixture.call("GET", "/v1/lists/feed?limit=5", headers: origin)
        let session = try fixture.call("POST", "/v1/lists/feed/sessions", json: ["limit": 5], headers: origin)
        let unauthorized = try fixture.call("DELETE", "/v1/lists/feed", headers: origin)
        let missing = try fixture.call("GET", "/v1/lists/none", headers: origin)
        let spec = try fixture.call("GET", "/openapi.yaml", headers: origin)
        for (name, response) in [
            ("put", put), ("page", page), ("session", session), ("401", unauthorized), ("404", missing),
            ("spec", spec),
        ] {
            #expect(response.headers["Access-Control-Allow-Origin"] == Self.app, "\(name)")
            #expect(response.headers.values(for: "Vary").contains("Origin"), "\(name)")
            #expect(
                Self.names(response.headers["Access-Control-Expose-Headers"]).isSuperset(of: [
                    "etag", "link", "location", "retry-after", "ratelimit", "ratelimit-policy", "www-authenticate",
                    "x-request-id",
                ]), "\(name)")
        }
        #expect(page.headers["ETag"] != nil && page.headers["Link"] != nil && page.headers["RateLimit"] != nil)
        #expect(session.headers["Location"] != nil)
        #expect(unauthorized.status == 401 && unauthorized.headers["WWW-Authenticate"] != nil)
        // A long poll answered later carries them too.
        let id = try session.object()["session"] as! String
        let poll = try fixture.call("GET", "/v1/sessions/\(id)/changes?seq=1&wait=1", headers: origin)
        #expect(poll.status == 200)
        #expect(poll.headers["Access-Control-Allow-Origin"] == Self.app)
        // So does an event stream's head.
        let reader = try EventStreamReader(
            port: fixture.server.port, target: "/v1/sessions/\(id)/events?seq=1", headers: origin)
        try reader.readHead()
        #expect(reader.status == 200)
        #expect(reader.headers["access-control-allow-origin"] == Self.app)
        #expect(reader.headers["access-control-expose-headers"] != nil)
    }

    @Test("the server's own refusals (413, 415, 400 of a body) name an allowed origin, so that its page reads them")
    func refusals() throws {
        let fixture = try APIFixture { configuration in
            configuration.crossOrigin.allowedOrigins = [Self.app]
            configuration.http.maxBodyBytes = 512
        }
        defer { fixture.stop() }
        let large = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        for (headers, body, chunked, status) in [
            ([("Origin", Self.app)], large, nil, 413), ([("Origin", Self.app)], large, 100, 413),
            ([("Origin", Self.app), ("Content-Encoding", "br")], [UInt8]("{}".utf8), nil, 415),
            ([("Origin", Self.app), ("Content-Encoding", "gzip")], [UInt8]("not gzip".utf8), nil, 400),
        ] as [([(String, String)], [UInt8], Int?, Int)] {
            let response = try fixture.server.connect().request(
                "PUT", "/v1/lists/feed", headers: headers, body: body, chunked: chunked)
            #expect(response.status == status)
            #expect(response.headers["Access-Control-Allow-Origin"] == Self.app, "\(status)")
            #expect(response.headers["Access-Control-Expose-Headers"] != nil, "\(status)")
            #expect(try ProblemDocument(response.body).status == status)
        }
        let other = try fixture.server.connect().request(
            "PUT", "/v1/lists/feed", headers: [("Origin", "http://evil.example.test")], body: large)
        #expect(other.status == 413)
        #expect(!other.headers.contains { $0.name.lowercased().hasPrefix("access-control-") })
        #expect(other.headers.values(for: "Vary").contains("Origin"))
    }

    @Test("another origin, or none, gets no CORS field but Vary: Origin, so that a cache keeps them apart")
    func otherOrigins() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        try fixture.put(
            "feed", listDocument(sections: 1, items: 3), headers: [("Authorization", "Bearer \(Self.token)")])
        for headers in [[("Origin", "http://evil.example.test")], [("Origin", Self.app.uppercased())], []] {
            let response = try fixture.call("GET", "/v1/lists/feed", headers: headers)
            #expect(response.status == 200)
            #expect(!response.headers.contains { $0.name.lowercased().hasPrefix("access-control-") }, "\(headers)")
            #expect(response.headers.values(for: "Vary").contains("Origin"), "\(headers)")
        }
    }

    @Test("allowedOrigins [*]: every origin, Access-Control-Allow-Origin: *, nothing varies by origin")
    func anyOrigin() throws {
        let fixture = try Self.fixture(origins: ["*"])
        defer { fixture.stop() }
        let preflight = try Self.preflight(fixture, origin: "http://anywhere.example.test")
        #expect(preflight.status == 204)
        #expect(preflight.headers["Access-Control-Allow-Origin"] == "*")
        let page = try fixture.call("GET", "/v1/lists/none", headers: [("Origin", "http://anywhere.example.test")])
        #expect(page.headers["Access-Control-Allow-Origin"] == "*")
        #expect(!page.headers.values(for: "Vary").contains("Origin"))
    }

    @Test("no origin configured (the default): no CORS field, no Vary: Origin, a preflight is 405")
    func off() throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        #expect(try Self.preflight(fixture, origin: Self.app).status == 405)
        let response = try fixture.call("GET", "/healthz", headers: [("Origin", Self.app)])
        #expect(!response.headers.contains { $0.name.lowercased().hasPrefix("access-control-") })
        #expect(!response.headers.values(for: "Vary").contains("Origin"))
    }
}
