import Glibc
import QuireTesting
import Testing

@testable import QuireHTTP

/// Compression: negotiation (RFC 9110 §12.5.3), the streaming compressor, spliced bodies, and over
/// loopback HTTP the encoded responses, entity tags and `304` per representation, and compressed request
/// bodies with the limit on the decoded size.
@Suite("Compression")
struct CompressionTests {
    /// A JSON body of about 6 KB that compresses well, with an entity tag.
    static let json: [UInt8] = Array(
        ("[" + (0..<120).map { #"{"id":"item-\#($0)","title":"Item number \#($0)"}"# }.joined(separator: ",") + "]")
            .utf8)

    static let page = PreparedResponse(
        Response(
            status: 200, headers: ["Content-Type": "application/json", "ETag": "\"7\"", "Cache-Control": "no-cache"],
            body: json))

    /// `/page`: a prepared response; `/small`: a short one; `/parts`: a body with a shared part; `/echo`:
    /// the request body back.
    static let responder = ClosureResponder { request in
        switch request.path {
        case "/page":
            return .prepared(page)
        case "/small":
            return .response(Response(status: 200, headers: ["Content-Type": "application/json"], text: "{}"))
        case "/parts":
            return .response(
                Response(
                    status: 200, headers: ["Content-Type": "application/json", "ETag": "\"9\""],
                    parts: [.bytes(Array(#"{"a":"#.utf8)), .shared(shared), .bytes(Array("}".utf8))]))
        default:
            return .response(
                Response(status: 200, headers: ["Content-Type": "application/octet-stream"], body: request.body))
        }
    }
    static let shared = SharedBody(json)

    static func decode(_ body: [UInt8], _ format: DeflateStream.Format) throws -> [UInt8] {
        let stream = InflateStream(format)
        let out = try stream.decompress(body)
        #expect(stream.isFinished)
        return out
    }

    @Test(
        "Accept-Encoding negotiation",
        arguments: [
            ("gzip", 5000, ContentCoding.gzip),
            ("gzip, deflate, br", 5000, .gzip),
            ("deflate", 5000, .deflate),
            ("deflate;q=1, gzip;q=0.5", 5000, .deflate),
            ("gzip;q=0", 5000, .identity),
            ("gzip;q=0, deflate;q=0.2", 5000, .deflate),
            ("identity", 5000, .identity),
            ("gzip;q=0.5, identity", 5000, .identity),
            ("*", 5000, .gzip),
            ("*;q=0, identity", 5000, .identity),
            ("br", 5000, .identity),
            ("", 5000, .identity),
            ("GZIP", 5000, .gzip),
            ("x-gzip", 5000, .gzip),
            ("gzip;q=1.5", 5000, .identity),
            ("gzip;q=abc", 5000, .identity),
            ("gzip", 100, .identity),
            ("gzip, identity;q=0", 100, .gzip),
        ])
    func negotiation(header: String, size: Int, expected: ContentCoding) {
        #expect(AcceptEncoding(header).preferred(size: size, threshold: 1024) == expected)
    }

    @Test("no Accept-Encoding: identity")
    func absent() {
        #expect(AcceptEncoding(nil).preferred(size: 5000, threshold: 1024) == .identity)
    }

    @Test("one-shot gzip and deflate decode to the original", arguments: [ContentCoding.gzip, .deflate])
    func oneShot(coding: ContentCoding) throws {
        let compressed = Compression.compress(Self.json, as: coding)
        #expect(compressed.count * 5 < Self.json.count)
        #expect(try Self.decode(compressed, coding == .gzip ? .gzip : .zlib) == Self.json)
    }

    @Test(
        "a body spliced from own bytes and a shared fragment is one valid stream",
        arguments: [ContentCoding.gzip, .deflate])
    func splice(coding: ContentCoding) throws {
        let parts: [BodyPart] = [.bytes(Array("head".utf8)), .shared(Self.shared), .bytes(Array("tail".utf8))]
        let spliced = Compression.splice(parts, as: coding, level: 6)
        let decoded = try Self.decode(spliced, coding == .gzip ? .gzip : .zlib)
        #expect(decoded == Array("head".utf8) + Self.json + Array("tail".utf8))
        // The shared part is compressed once: a second splice reuses its fragment.
        #expect(Self.shared.deflated(level: 6).bytes == Self.shared.deflated(level: 1).bytes)
    }

    @Test("the streaming compressor: every flushed event decodes at once, before the next is written")
    func streaming() throws {
        let compressor = DeflateStream(.gzip, level: 6)
        let reader = InflateStream(.gzip)
        for index in 0..<20 {
            let event = Array("id: \(index)\ndata: {\"seq\":\(index),\"changes\":[1,2,3]}\n\n".utf8)
            let chunk = compressor.compress(event)
            #expect(!chunk.isEmpty)
            #expect(try reader.decompress(chunk) == event, "event \(index) waited in a buffer")
        }
        let end = compressor.finish()
        #expect(try reader.decompress(end).isEmpty)
        #expect(reader.isFinished)
    }

    // MARK: over HTTP

    @Test(
        "GET with every Accept-Encoding case: coding, Vary, per-representation ETag, body equal to the plain one",
        arguments: [
            ("gzip", "gzip"), ("gzip;q=0", nil), ("identity", nil), ("*", "gzip"), (nil, nil), ("br", nil),
            ("deflate", "deflate"),
        ] as [(String?, String?)])
    func negotiatedOverHTTP(accept: String?, expected: String?) throws {
        let server = try TestServer(responder: Self.responder)
        defer { server.stop() }
        for path in ["/page", "/parts"] {
            let headers = accept.map { [("Accept-Encoding", $0)] } ?? []
            let response = try server.request("GET", path, headers: headers)
            #expect(response.status == 200)
            #expect(response.headers["Content-Encoding"] == expected)
            #expect(response.headers["Vary"] == "Accept-Encoding")
            let plainTag = path == "/page" ? "\"7\"" : "\"9\""
            let tag = expected.map { "\"\(plainTag.dropFirst().dropLast())-\($0)\"" } ?? plainTag
            #expect(response.headers["ETag"] == tag)
            let plain = path == "/page" ? Self.json : Array(#"{"a":"#.utf8) + Self.json + Array("}".utf8)
            switch expected {
            case "gzip": #expect(try Self.decode(response.body, .gzip) == plain)
            case "deflate": #expect(try Self.decode(response.body, .zlib) == plain)
            default: #expect(response.body == plain)
            }
        }
    }

    @Test("a body under the threshold goes as it is, with Vary")
    func small() throws {
        let server = try TestServer(responder: Self.responder)
        defer { server.stop() }
        let response = try server.request("GET", "/small", headers: [("Accept-Encoding", "gzip")])
        #expect(response.headers["Content-Encoding"] == nil)
        #expect(response.headers["Vary"] == "Accept-Encoding")
        #expect(response.text == "{}")
        #expect(response.headers["Cache-Control"] == "no-store")
    }

    @Test("compression switched off: plain, no Vary")
    func disabled() throws {
        let server = try TestServer(responder: Self.responder) { $0.compression.enabled = false }
        defer { server.stop() }
        let response = try server.request("GET", "/page", headers: [("Accept-Encoding", "gzip")])
        #expect(response.headers["Content-Encoding"] == nil)
        #expect(response.headers["Vary"] == nil)
        #expect(response.body == Self.json)
    }

    @Test("If-None-Match: 304 for the representation the client holds, 200 for another")
    func notModified() throws {
        let server = try TestServer(responder: Self.responder)
        defer { server.stop() }
        let gzip = [("Accept-Encoding", "gzip")]
        let held = try server.request("GET", "/page", headers: gzip + [("If-None-Match", "\"7-gzip\"")])
        #expect(held.status == 304)
        #expect(held.headers["ETag"] == "\"7-gzip\"")
        #expect(held.headers["Vary"] == "Accept-Encoding")
        #expect(held.headers["Cache-Control"] == "no-cache")
        #expect(held.body.isEmpty)
        let plain = try server.request("GET", "/page", headers: [("If-None-Match", "\"7\"")])
        #expect(plain.status == 304)
        #expect(plain.headers["ETag"] == "\"7\"")
        // The client holds the plain one but now takes gzip: a different representation, sent whole.
        let other = try server.request("GET", "/page", headers: gzip + [("If-None-Match", "\"7\"")])
        #expect(other.status == 200)
        #expect(other.headers["ETag"] == "\"7-gzip\"")
        let both = try server.request("GET", "/parts", headers: gzip + [("If-None-Match", "\"1\", W/\"9-gzip\"")])
        #expect(both.status == 304)
    }

    /// The server reads these fields from its framing scan, not from a lookup: any case of their names, and a
    /// field sent twice is one list (RFC 9110 §5.3), not its first value.
    @Test("Accept-Encoding, If-None-Match and Content-Encoding: any case, a repeated field read as one list")
    func repeatedFields() throws {
        let server = try TestServer(responder: Self.responder)
        defer { server.stop() }
        let lower = try server.request("GET", "/page", headers: [("accept-encoding", "gzip")])
        #expect(lower.headers["Content-Encoding"] == "gzip")
        let twice = try server.request(
            "GET", "/page", headers: [("Accept-Encoding", "identity;q=0.5"), ("Accept-Encoding", "gzip")])
        #expect(twice.headers["Content-Encoding"] == "gzip")
        let refused = try server.request(
            "GET", "/page", headers: [("Accept-Encoding", "gzip;q=0"), ("ACCEPT-ENCODING", "deflate;q=0")])
        #expect(refused.headers["Content-Encoding"] == nil)
        #expect(refused.body == Self.json)
        let held = try server.request(
            "GET", "/page", headers: [("If-None-Match", "\"1\""), ("if-none-match", "\"2\", \"7\"")])
        #expect(held.status == 304)
        let notHeld = try server.request(
            "GET", "/page", headers: [("If-None-Match", "\"1\""), ("If-None-Match", "\"2\"")])
        #expect(notHeld.status == 200)
        let body = Compression.compress(Self.json, as: .gzip)
        let decoded = try server.request("POST", "/echo", headers: [("content-encoding", "gzip")], body: body)
        #expect(decoded.status == 200)
        #expect(decoded.body == Self.json)
    }

    @Test(
        "a gzip or deflate request body is decoded before the handler sees it",
        arguments: [ContentCoding.gzip, .deflate])
    func compressedRequestBody(coding: ContentCoding) throws {
        let server = try TestServer(responder: Self.responder)
        defer { server.stop() }
        let body = Compression.compress(Self.json, as: coding)
        let response = try server.request(
            "POST", "/echo", headers: [("Content-Encoding", coding.rawValue)], body: body)
        #expect(response.status == 200)
        #expect(response.body == Self.json)
    }

    @Test("an unknown Content-Encoding is 415 with Accept-Encoding; broken gzip is 400")
    func refusedRequestBodies() throws {
        let server = try TestServer(responder: Self.responder)
        defer { server.stop() }
        let unknown = try server.request("POST", "/echo", headers: [("Content-Encoding", "br")], body: [1, 2, 3])
        #expect(unknown.status == 415)
        #expect(unknown.headers["Accept-Encoding"] == "gzip, deflate")
        let broken = try server.request("POST", "/echo", headers: [("Content-Encoding", "gzip")], body: [1, 2, 3])
        #expect(broken.status == 400)
        var truncated = Compression.compress(Self.json, as: .gzip)
        truncated.removeLast(10)
        let short = try server.request("POST", "/echo", headers: [("Content-Encoding", "gzip")], body: truncated)
        #expect(short.status == 400)
    }

    @Test("a gzip bomb (500 KB that decodes to 500 MB) is refused with 413 in bounded memory")
    func gzipBomb() throws {
        let server = try TestServer(responder: Self.responder) { $0.maxBodyBytes = 1 << 20 }
        defer { server.stop() }
        let compressor = DeflateStream(.gzip, level: 9)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var bomb: [UInt8] = []
        for _ in 0..<500 { bomb += compressor.compress(zeros, flush: .none) }
        bomb += compressor.finish()
        #expect(bomb.count < 1 << 20)
        let before = Self.peakResidentBytes()
        let response = try server.connect(timeoutSeconds: 30).request(
            "POST", "/echo", headers: [("Content-Encoding", "gzip")], body: bomb)
        #expect(response.status == 413)
        // Inflating it all would need 500 MB; stopping at the limit needs about one.
        #expect(Self.peakResidentBytes() - before < 128 << 20)
    }

    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }
}
