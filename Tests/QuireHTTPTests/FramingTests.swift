import QuireHTTP
import QuireTesting
import Synchronization
import Testing

/// Request smuggling over raw sockets: each request of the corpus is followed, on the same connection, by
/// a second request (`GET /smuggled`). A refused request is answered with its status and the connection
/// closed: the second request is never processed, whatever framing a proxy in front would have seen.
@Suite("Strict framing (RFC 9112)")
struct FramingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: String
        let status: Int
        /// The refusal counted for it; nil for libmicrohttpd's own refusals (counted nowhere of ours).
        let refusal: FramingRefusal?
        var testDescription: String { name }
    }

    static let post = "POST /target HTTP/1.1\r\nHost: x\r\n"

    /// Refused by QuireHTTP's check, with a problem document.
    static let refused: [Case] = [
        Case(
            name: "two Content-Length, different values",
            bytes: post + "Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}",
            status: 400, refusal: .duplicateContentLength),
        Case(
            name: "whitespace before the colon", bytes: "GET /target HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n",
            status: 400, refusal: .invalidFieldName),
        Case(
            name: "tab before the colon", bytes: "GET /target HTTP/1.1\r\nHost: x\r\nX-A\t: 1\r\n\r\n", status: 400,
            refusal: .invalidFieldName),
        Case(
            name: "space inside a field name", bytes: "GET /target HTTP/1.1\r\nHost: x\r\nX A: 1\r\n\r\n", status: 400,
            refusal: .invalidFieldName),
        Case(
            name: "control character in a field name", bytes: "GET /target HTTP/1.1\r\nHost: x\r\nX\u{1}A: 1\r\n\r\n",
            status: 400, refusal: .invalidFieldName),
        Case(
            name: "HTTP/1.1 without Host", bytes: "GET /target HTTP/1.1\r\nAccept: */*\r\n\r\n", status: 400,
            refusal: .host),
        Case(
            name: "two Host fields", bytes: "GET /target HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400,
            refusal: .host),
        Case(
            name: "NUL in a field value", bytes: "GET /target HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n",
            status: 400, refusal: .invalidFieldValue),
        Case(
            name: "NUL in the last field's value", bytes: "GET /target HTTP/1.1\r\nX-A: 1\r\nHost: x\u{0}y\r\n\r\n",
            status: 400, refusal: .invalidFieldValue),
        Case(
            name: "NUL hiding a Transfer-Encoding",
            bytes: post + "Transfer-Encoding: chunked\u{0}x\r\n\r\n0\r\n\r\n", status: 400,
            refusal: .invalidFieldValue),
        Case(
            name: "bare CR in a field value", bytes: "GET /target HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n",
            status: 400, refusal: .invalidFieldValue),
        Case(
            name: "DEL in a field value", bytes: "GET /target HTTP/1.1\r\nHost: x\r\nX-A: a\u{7F}\r\n\r\n",
            status: 400, refusal: .invalidFieldValue),
        Case(
            name: "obsolete line folding", bytes: "GET /target HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  b\r\nX-B: 1\r\n\r\n",
            status: 400, refusal: .obsoleteLineFolding),
        Case(
            name: "obsolete line folding, last field",
            bytes: "GET /target HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb\r\n\r\n",
            status: 400, refusal: .obsoleteLineFolding),
        Case(
            name: "unknown transfer coding with Content-Length",
            bytes: post + "Transfer-Encoding: xchunked\r\nContent-Length: 2\r\n\r\n{}", status: 501,
            refusal: .unknownTransferCoding),
        Case(
            name: "unknown transfer coding", bytes: post + "Transfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            status: 501, refusal: .unknownTransferCoding),
        Case(
            name: "gzip before chunked", bytes: post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            status: 501, refusal: .unknownTransferCoding),
        Case(
            name: "CL.TE: Content-Length and chunked",
            bytes: post + "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG", status: 400,
            refusal: .contentLengthWithTransferEncoding),
        Case(
            name: "TE.CL: chunked and Content-Length",
            bytes: post + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n",
            status: 400,
            refusal: .contentLengthWithTransferEncoding),
        Case(
            name: "TE.TE: chunked twice in two fields",
            bytes: post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400,
            refusal: .invalidTransferEncoding),
        Case(
            name: "TE.TE: chunked and an obfuscated coding",
            bytes: post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n0\r\n\r\n", status: 400,
            refusal: .invalidTransferEncoding),
        Case(
            name: "TE.TE: chunked, chunked", bytes: post + "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n",
            status: 400, refusal: .invalidTransferEncoding),
        Case(
            name: "TE.TE: chunked with trailing whitespace",
            bytes: post + "Transfer-Encoding: chunked \r\n\r\n0\r\n\r\n", status: 400,
            refusal: .invalidTransferEncoding),
        Case(
            name: "TE.TE: space before the colon", bytes: post + "Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
            status: 400, refusal: .invalidFieldName),
        Case(
            name: "Transfer-Encoding in HTTP/1.0",
            bytes: "POST /target HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400,
            refusal: .invalidTransferEncoding),
    ]

    /// Refused by libmicrohttpd itself before QuireHTTP sees the request (its own HTML body, the
    /// connection closed): documented in docs/operations.md.
    static let refusedByLibrary: [Case] = [
        Case(name: "negative Content-Length", bytes: post + "Content-Length: -1\r\n\r\n", status: 400, refusal: nil),
        Case(name: "Content-Length list", bytes: post + "Content-Length: 2, 2\r\n\r\n{}", status: 400, refusal: nil),
        Case(
            name: "chunk size that overflows", bytes: post + "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\n",
            status: 413, refusal: nil),
        Case(
            name: "request line of 100 KB",
            bytes: "GET /" + String(repeating: "a", count: 100_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
            status: 414, refusal: nil),
        Case(
            name: "header line of 200 KB",
            bytes: "GET /target HTTP/1.1\r\nHost: x\r\nX-Big: "
                + String(repeating: "a", count: 200_000) + "\r\n\r\n", status: 431, refusal: nil),
        Case(
            name: "chunk extension flood",
            bytes: post + "Transfer-Encoding: chunked\r\n\r\n2;" + String(repeating: "a=b;", count: 30_000)
                + "\r\n{}\r\n0\r\n\r\n",
            status: 500, refusal: nil),
    ]

    /// Accepted: what the RFCs allow, so that strictness refuses nothing a real client sends.
    static let accepted: [Case] = [
        Case(name: "plain request", bytes: "GET /target HTTP/1.1\r\nHost: x\r\n\r\n", status: 200, refusal: nil),
        Case(
            name: "bare LF line ends (RFC 9112 §2.2)", bytes: "GET /target HTTP/1.1\nHost: x\nX-A: 1\n\n", status: 200,
            refusal: nil),
        Case(
            name: "two Content-Length, same value", bytes: post + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            status: 200, refusal: nil),
        Case(
            name: "HTTP/1.0 without Host", bytes: "GET /target HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", status: 200,
            refusal: nil),
        Case(
            name: "chunked body", bytes: post + "Transfer-Encoding: Chunked\r\n\r\n2;ext=1\r\n{}\r\n0\r\n\r\n",
            status: 200, refusal: nil),
        Case(
            name: "empty values, tabs, obs-text, no space after the colon, cookies (parsed by libmicrohttpd on a copy)",
            bytes:
                "GET /target HTTP/1.1\r\nHost:x\r\nX-Empty:\r\nX-Tab: a\tb \r\nX-Text: caf\u{E9}\r\nCookie: a=1; b=2\r\n\r\n",
            status: 200, refusal: nil),
    ]

    /// Counts every request the responder sees, by path.
    final class Seen: Sendable {
        let paths = Mutex<[String]>([])
        var responder: ClosureResponder {
            ClosureResponder { request in
                self.paths.withLock { $0.append(request.path) }
                return .response(Response(status: 200, text: "ok"))
            }
        }
    }

    @Test("a refused framing gets its problem document and the connection is closed", arguments: refused)
    func refusedFraming(_ example: Case) throws {
        let seen = Seen()
        let server = try TestServer(responder: seen.responder)
        defer { server.stop() }
        let connection = try server.connect(timeoutSeconds: 5)
        try connection.write(Array(example.bytes.utf8) + Array("GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let response = try connection.readResponse()
        #expect(response.status == example.status)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.headers["Connection"]?.lowercased() == "close")
        #expect(response.text.contains("\"status\":\(example.status)"))
        #expect(throws: HTTPClientError.self) { try connection.readResponse() }
        #expect(seen.paths.withLock { $0 }.isEmpty)
        if let refusal = example.refusal {
            #expect(server.server.framingRefusalCounts == [refusal: 1])
        }
    }

    /// The check reads a value's 16-byte blocks in one loop, then what is left 8 bytes at a time as words
    /// (`quire_framing_value_is_clean`): a forbidden byte is found wherever it falls, and nothing else is refused.
    @Test("a field value's every byte is checked, in its 16-byte blocks, its words and its last bytes")
    func valueBytesWherever() throws {
        let server = try TestServer(responder: Seen().responder)
        defer { server.stop() }
        let forbidden: [UInt8] = [0x01, 0x08, 0x0B, 0x1F, 0x7F]
        let allowed: [UInt8] = [0x09, 0x20, 0x7E, 0x80, 0xFF]
        for length in [1, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 40] {
            for position in Set([0, length / 2, length - 1]) {
                for byte in forbidden + allowed {
                    var value = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    value[position] = byte
                    let request =
                        Array("GET /target HTTP/1.1\r\nHost: x\r\nX-A: ".utf8) + value + Array("\r\n\r\n".utf8)
                    let connection = try server.connect(timeoutSeconds: 5)
                    try connection.write(request)
                    let status = try connection.readResponse().status
                    #expect(
                        status == (forbidden.contains(byte) ? 400 : 200),
                        "byte \(byte) at \(position) of a \(length)-byte value")
                }
            }
        }
    }

    @Test(
        "the client's X-Request-Id is echoed whether the framing check read it before refusing, after, or never refused"
    )
    func requestIDsAroundTheFramingCheck() throws {
        let server = try TestServer(responder: Seen().responder)
        defer { server.stop() }
        let cases: [(bytes: String, status: Int, id: String)] = [
            // The refusal (two Host fields) comes after the id: the scan has read it.
            (
                "GET /target HTTP/1.1\r\nX-Request-Id: before-refusal\r\nHost: a\r\nHost: b\r\n\r\n", 400,
                "before-refusal"
            ),
            // The scan stops at the bad field name before reaching the id: it is looked up.
            ("GET /target HTTP/1.1\r\nHost: x\r\nX A: 1\r\nX-Request-Id: after-refusal\r\n\r\n", 400, "after-refusal"),
            // A declared body over the limit, refused before it is read.
            (Self.post + "X-Request-Id: too-large\r\nContent-Length: 99999999999\r\n\r\n", 413, "too-large"),
            (
                "GET /target HTTP/1.1\r\nHost: x\r\nX-Request-Id: accepted\r\nX-Request-Id: second\r\n\r\n", 200,
                "accepted"
            ),
        ]
        for (bytes, status, id) in cases {
            let connection = try server.connect(timeoutSeconds: 5)
            try connection.write(Array(bytes.utf8))
            let response = try connection.readResponse()
            #expect(response.status == status, "\(bytes)")
            #expect(response.headers["X-Request-Id"] == id, "\(bytes)")
        }
        // Without one, a generated id of 15 hex digits.
        let connection = try server.connect(timeoutSeconds: 5)
        try connection.write(Array("GET /target HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n".utf8))
        let generated = try connection.readResponse().headers["X-Request-Id"] ?? ""
        #expect(
            generated.utf8.count == 15
                && generated.utf8.allSatisfy { $0 < 128 && Character(Unicode.Scalar($0)).isHexDigit })
    }

    @Test("libmicrohttpd's own refusals close the connection too", arguments: refusedByLibrary)
    func libraryRefusal(_ example: Case) throws {
        let seen = Seen()
        let server = try TestServer(responder: seen.responder)
        defer { server.stop() }
        let connection = try server.connect(timeoutSeconds: 5)
        // The server may close before it has read all of a long request: a failed write is fine.
        try? connection.write(Array(example.bytes.utf8) + Array("GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let response = try connection.readResponse()
        #expect(response.status == example.status)
        #expect(throws: HTTPClientError.self) {
            // What follows is the end of the connection, or the rest of libmicrohttpd's (repeated) header
            // block: never a second answer.
            let next = try connection.readResponse()
            if next.status == 200 { return }
            throw HTTPClientError("not an answer to /smuggled")
        }
        #expect(!seen.paths.withLock { $0 }.contains("/smuggled"))
    }

    @Test("what the RFCs allow is accepted, and the next request on the connection is answered", arguments: accepted)
    func acceptedFraming(_ example: Case) throws {
        let seen = Seen()
        let server = try TestServer(responder: seen.responder)
        defer { server.stop() }
        let connection = try server.connect(timeoutSeconds: 5)
        try connection.write(Array(example.bytes.utf8) + Array("GET /next HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try connection.readResponse().status == 200)
        #expect(try connection.readResponse().status == 200)
        #expect(seen.paths.withLock { $0 } == ["/target", "/next"])
        #expect(server.server.framingRefusalCounts.isEmpty)
    }
}
