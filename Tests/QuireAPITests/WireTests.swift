import Foundation
import QuireTesting
import Testing

@testable import QuireAPI
@testable import QuireHTTP

/// The service on the wire (openapi.yaml): compressed pages, session answers and request bodies, entity tags
/// and `304` per representation, `Cache-Control` by route kind, and metrics with help text.
@Suite("On the wire: compression, cache policy, metrics")
struct WireTests {
    static let gzip = [("Accept-Encoding", "gzip")]

    static func gunzip(_ body: [UInt8]) throws -> [UInt8] {
        let stream = InflateStream(.gzip)
        let out = try stream.decompress(body)
        #expect(stream.isFinished)
        return out
    }

    @Test("a page: gzip is byte-equal to plain, one tag per representation, 304 for each, no-cache")
    func page() throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        let version = try fixture.put("feed", listDocument(sections: 2, items: 40))
        let plain = try fixture.call("GET", "/v1/lists/feed?limit=50")
        let zipped = try fixture.call("GET", "/v1/lists/feed?limit=50", headers: Self.gzip)
        #expect(plain.headers["Content-Encoding"] == nil)
        #expect(zipped.headers["Content-Encoding"] == "gzip")
        #expect(Self.seqless(try Self.gunzip(zipped.body)) == Self.seqless(plain.body))
        #expect(zipped.body.count * 5 <= plain.body.count)
        for response in [plain, zipped] {
            #expect(response.headers["Vary"] == "Accept-Encoding")
            #expect(response.headers["Cache-Control"] == "no-cache")
        }
        #expect(plain.headers["ETag"] == "\"\(version)\"")
        #expect(zipped.headers["ETag"] == "\"\(version)-gzip\"")
        let heldPlain = try fixture.call(
            "GET", "/v1/lists/feed?limit=50", headers: [("If-None-Match", "\"\(version)\"")])
        #expect(heldPlain.status == 304)
        let heldZipped = try fixture.call(
            "GET", "/v1/lists/feed?limit=50", headers: Self.gzip + [("If-None-Match", "\"\(version)-gzip\"")])
        #expect(heldZipped.status == 304)
        #expect(heldZipped.headers["ETag"] == "\"\(version)-gzip\"")
        // An old version is not the current one.
        let stale = try fixture.call("GET", "/v1/lists/feed?limit=50", headers: [("If-None-Match", "\"0\"")])
        #expect(stale.status == 200)
        // A write may name the version by either representation's tag.
        let write = try fixture.call(
            "POST", "/v1/lists/feed/ops",
            json: ["ops": [["op": "updateItems", "items": [["id": "s0-0", "type": "row", "data": ["n": 99]]]]]],
            headers: [("If-Match", "\"\(version)-gzip\"")])
        #expect(write.status == 200)
        #expect(write.headers["Cache-Control"] == "no-store")
    }

    @Test("sessions: creation and shared answers compressed, byte-equal to plain, no-store")
    func sessions() throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 200))
        let created = try fixture.call("POST", "/v1/lists/feed/sessions", json: ["limit": 50], headers: Self.gzip)
        #expect(created.status == 201)
        #expect(created.headers["Content-Encoding"] == "gzip")
        #expect(created.headers["Cache-Control"] == "no-store")
        let first = try JSONSerialization.jsonObject(with: Data(try Self.gunzip(created.body))) as! [String: Any]
        let second = try fixture.call("POST", "/v1/lists/feed/sessions", json: ["limit": 50]).object()
        // A write every item of both windows sees: both sessions share one answer.
        try fixture.put("feed", listDocument(sections: 1, items: 200, prefix: "new-"))
        for (session, encoding) in [(first, "gzip"), (second, "identity")] {
            let path = "/v1/sessions/\(session["session"] as! String)/changes?since=\(session["version"] as! Int)"
            let plain = try fixture.call("GET", path)
            let zipped = try fixture.call("GET", path, headers: [("Accept-Encoding", encoding)])
            #expect(plain.status == 200)
            #expect(plain.headers["Cache-Control"] == "no-store")
            if encoding == "gzip" {
                #expect(zipped.headers["Content-Encoding"] == "gzip")
                #expect(Self.seqless(try Self.gunzip(zipped.body)) == Self.seqless(plain.body))
            } else {
                #expect(Self.seqless(zipped.body) == Self.seqless(plain.body))
            }
        }
    }

    /// An answer's body with its `seq` blanked: the second request of a pair is a retry from the window
    /// before, answered again from there under a new `seq` (openapi.yaml); the rest is byte-equal.
    static func seqless(_ body: [UInt8]) -> String {
        String(decoding: body, as: UTF8.self).replacingOccurrences(
            of: #""seq":[0-9]+"#, with: #""seq":_"#, options: .regularExpression)
    }

    @Test("a shared answer is compressed once: every session's gzip body carries the same deflate fragment")
    func sharedAnswerCompressedOnce() throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 200))
        // Sessions opened on the same first window: its bytes are made and compressed once, too.
        let created = try (0..<3).map { _ in
            try fixture.call("POST", "/v1/lists/feed/sessions", json: ["limit": 50], headers: Self.gzip)
        }
        let sessions = try created.map { response in
            #expect(response.headers["Content-Encoding"] == "gzip")
            return try JSONSerialization.jsonObject(with: Data(try Self.gunzip(response.body))) as! [String: Any]
        }
        #expect(Set(sessions.map { $0["session"] as! String }).count == 3)
        #expect(sessions.allSatisfy { ($0["sections"] as! [[String: Any]]).first?["items"] as? [Any] != nil })
        let firstCommon = Self.longestCommonRun(created[0].body, created[1].body)
        #expect(firstCommon * 2 > created[0].body.count, "common run \(firstCommon) of \(created[0].body.count)")
        // One opened elsewhere (around an item) has a window of its own, and is still whole and right.
        let around = try fixture.call(
            "POST", "/v1/lists/feed/sessions", json: ["limit": 30, "around": "s0-100"], headers: Self.gzip)
        #expect(around.status == 201)
        let aroundBody = try JSONSerialization.jsonObject(with: Data(try Self.gunzip(around.body))) as! [String: Any]
        #expect(aroundBody["session"] is String)
        // A write every item of the three (equal) windows sees: one shared answer, larger than the threshold.
        try fixture.put("feed", listDocument(sections: 1, items: 200, prefix: "new-"))
        var bodies: [[UInt8]] = []
        for session in sessions {
            let path = "/v1/sessions/\(session["session"] as! String)/changes?since=\(session["version"] as! Int)"
            let plain = try fixture.call("GET", path, headers: [("Accept-Encoding", "identity")])
            let zipped = try fixture.call("GET", path, headers: Self.gzip)
            #expect(zipped.headers["Content-Encoding"] == "gzip")
            #expect(Self.seqless(try Self.gunzip(zipped.body)) == Self.seqless(plain.body))
            bodies.append(zipped.body)
        }
        // Each session's own bytes (its id, around the content) differ; compressed whole, each body would be
        // a different deflate stream from its first block on. Spliced, all carry one fragment, byte for byte:
        // the shared content, compressed once.
        for (first, second) in [(0, 1), (1, 2), (0, 2)] {
            let common = Self.longestCommonRun(bodies[first], bodies[second])
            #expect(common * 2 > bodies[first].count, "common run \(common) of \(bodies[first].count) bytes")
        }
    }

    /// The length of the longest run of bytes that `a` and `b` both contain.
    static func longestCommonRun(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = [Int](repeating: 0, count: b.count + 1)
        var best = 0
        for i in a.indices {
            var current = [Int](repeating: 0, count: b.count + 1)
            for j in b.indices where a[i] == b[j] {
                current[j + 1] = previous[j] + 1
                best = max(best, current[j + 1])
            }
            previous = current
        }
        return best
    }

    @Test("a gzip request body: a PUT of a list, decoded before the route reads it")
    func gzipRequestBody() throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        let json = try JSONSerialization.data(withJSONObject: listDocument(sections: 1, items: 30))
        let response = try fixture.server.request(
            "PUT", "/v1/lists/zipped",
            headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
            body: Compression.compress(Array(json), as: .gzip))
        #expect(response.status == 201)
        #expect(fixture.listIDs("zipped").count == 30)
        let unknown = try fixture.server.request(
            "PUT", "/v1/lists/zipped",
            headers: [("Content-Type", "application/json"), ("Content-Encoding", "br")], body: Array(json))
        #expect(unknown.status == 415)
        #expect(try unknown.problemSlug() == "unsupported-media-type")
        // Without a body the coding is still read: identity is nothing to decode, br is refused, and an empty gzip
        // body is not gzip data.
        let page = try fixture.server.request("GET", "/v1/lists/zipped", headers: [("Content-Encoding", "identity")])
        #expect(page.status == 200)
        let noBody = try fixture.server.request("GET", "/v1/lists/zipped", headers: [("Content-Encoding", "br")])
        #expect(noBody.status == 415)
        let emptyGzip = try fixture.server.request("GET", "/v1/lists/zipped", headers: [("Content-Encoding", "gzip")])
        #expect(emptyGzip.status == 400)
        #expect(try emptyGzip.problemSlug() == "invalid-request")
    }

    @Test("operations endpoints: /healthz, /readyz and /metrics no-store; /openapi.yaml cacheable with a tag")
    func operations() throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        for path in ["/healthz", "/readyz", "/metrics", "/v1/sessions/none/changes?since=1", "/nowhere"] {
            #expect(try fixture.call("GET", path).headers["Cache-Control"] == "no-store", "\(path)")
        }
        let spec = try fixture.call("GET", "/openapi.yaml", headers: Self.gzip)
        #expect(spec.headers["Cache-Control"] == "max-age=300")
        let tag = try #require(spec.headers["ETag"])
        #expect(tag.hasSuffix("-gzip\""))
        let held = try fixture.call("GET", "/openapi.yaml", headers: Self.gzip + [("If-None-Match", tag)])
        #expect(held.status == 304)
        let index = try fixture.call("GET", "/v1/lists")
        #expect(index.headers["Cache-Control"] == "no-cache")
        let indexTag = try #require(index.headers["ETag"])
        #expect(try fixture.call("GET", "/v1/lists", headers: [("If-None-Match", indexTag)]).status == 304)
    }

    @Test("a configured max-age with stale-while-revalidate for pages and the index")
    func maxAge() throws {
        let fixture = try APIFixture {
            $0.cache.listMaxAge = 5
            $0.cache.listStaleWhileRevalidate = 30
        }
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 3))
        for path in ["/v1/lists/feed", "/v1/lists"] {
            #expect(
                try fixture.call("GET", path).headers["Cache-Control"] == "max-age=5, stale-while-revalidate=30")
        }
        #expect(try fixture.call("GET", "/v1/lists/missing").headers["Cache-Control"] == "no-store")
    }

    @Test("metrics: every family has HELP; body bytes before and after compression are counted")
    func metrics() throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 100))
        _ = try fixture.call("GET", "/v1/lists/feed?limit=50", headers: Self.gzip)
        let text = try fixture.call("GET", "/metrics").text
        let families = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map {
            $0.split(separator: " ")[2]
        }
        #expect(families.count >= 14)
        for family in families {
            #expect(text.contains("# HELP \(family) "), "\(family) has no help text")
        }
        func value(_ name: String) -> Double {
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
                Double($0.split(separator: " ")[1])
            }
                ?? 0
        }
        #expect(value("quire_http_response_body_bytes_total") > value("quire_http_response_body_sent_bytes_total"))
        #expect(value("quire_http_response_body_sent_bytes_total") > 0)
    }
}
