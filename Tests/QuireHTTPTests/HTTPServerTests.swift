import Glibc
import QuireTesting
import Synchronization
import Testing

@testable import QuireHTTP

@Suite("HTTP server over loopback")
struct HTTPServerTests {
    @Test("port 0 binds a free port that can be read back")
    func boundPort() throws {
        let server = try TestServer(responder: Responders.echo)
        defer { server.stop() }
        #expect(server.port > 0)
        #expect(try server.request("GET", "/").status == 200)
    }

    @Test("an IPv6 address: bound, port read back, served (where the machine has IPv6 loopback)")
    func ipv6Loopback() throws {
        let server: TestServer
        do {
            server = try TestServer(responder: Responders.echo) { $0.host = "::1" }
        } catch let error as HTTPServerError
            where error.description.contains("Cannot assign requested address")
            || error.description.contains("Address family not supported")
        {
            return  // no IPv6 loopback in this container
        }
        defer { server.stop() }
        #expect(server.port > 0)
        let response = try HTTPClientConnection(host: "::1", port: server.port).request("GET", "/six")
        #expect(response.status == 200)
        #expect(response.headers["X-Path"] == "/six")
    }

    @Test("two requests on one keep-alive connection")
    func keepAlive() throws {
        let server = try TestServer(responder: Responders.echo)
        defer { server.stop() }
        let connection = try server.connect()
        let first = try connection.request("GET", "/one?a=1&b=x%20y&flag")
        let second = try connection.request("POST", "/two", body: Array("hello".utf8))
        #expect(first.status == 200)
        #expect(first.headers["x-path"] == "/one")
        #expect(first.headers["X-Query"] == "a=1&b=x y&flag=")
        #expect(first.headers["connection"]?.lowercased() != "close")
        #expect(second.headers["X-Method"] == "POST")
        #expect(second.text == "hello")
        #expect(!connection.isClosedByPeer)
    }

    /// The server decodes escapes from the first `%` on (quire_unescape) and keeps a thread's previous path to
    /// reuse when the next request's bytes are the same (`ThreadRequestCache.path`): neither may change what a handler
    /// sees, whatever the order of the paths.
    @Test("percent escapes are decoded wherever they start, in the path and the query, whatever path came before")
    func percentDecoding() throws {
        let server = try TestServer(
            responder: ClosureResponder { request in
                let query = request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
                return .response(Response(status: 200, body: Array("\(request.path) \(query)".utf8)))
            })
        defer { server.stop() }
        let connection = try server.connect()
        let cases: [(target: String, seen: String)] = [
            ("/a%62c/d?x=%41%42&y=1%2", "/abc/d x=AB&y=1%2"),
            ("/abc/d?x=1", "/abc/d x=1"),  // the same path, sent plainly
            ("/abc/d", "/abc/d "),
            ("/abc/de", "/abc/de "),  // longer, with the same start
            ("/abc/", "/abc/ "),  // a prefix of the one before
            ("/%zz%4", "/%zz%4 "),  // malformed escapes are kept as sent
            ("/x?q=a+b%2Bc&%71=%", "/x q=a b+c&q=%"),
            ("/caf%C3%A9", "/café "),
            ("/caf%C3%A9?n=%C3%A9", "/café n=é"),
            ("/", "/ "),
            ("/a%62c/d", "/abc/d "),
        ]
        for (target, seen) in cases {
            let response = try connection.request("GET", target)
            #expect(response.status == 200)
            #expect(response.text == seen, "\(target)")
        }
        #expect(!connection.isClosedByPeer)
    }

    @Test("a path that is not UTF-8 is repaired, and its repair never taken for the same bytes")
    func repairedPath() {
        let cache = ThreadRequestCache()
        let invalid: [CChar] = [0x2F, 0x61, CChar(bitPattern: 0xFF), 0]
        #expect(cache.path(invalid) == "/a\u{FFFD}")
        #expect(cache.path(invalid) == "/a\u{FFFD}")
        #expect(cache.path(Array("/a\u{FFFD}".utf8CString)) == "/a\u{FFFD}")
        #expect(cache.path(Array("/a".utf8CString)) == "/a")
        #expect(cache.path(Array("".utf8CString)) == "")
        #expect(cache.path(Array("/a".utf8CString)) == "/a")
    }

    /// A connection's requests share one context (made when the connection opens): nothing of one request may
    /// reach the next.
    @Test("each request on a keep-alive connection starts afresh: its own request id, method and body")
    func requestsStartAfresh() throws {
        let server = try TestServer(responder: Responders.echo)
        defer { server.stop() }
        let connection = try server.connect()
        let first = try connection.request(
            "POST", "/one", headers: [("X-Request-Id", "first.1")], body: Array("body one".utf8))
        #expect(first.headers["X-Request-Id"] == "first.1")
        #expect(first.text == "body one")
        let second = try connection.request("GET", "/two")
        let generated = try #require(second.headers["X-Request-Id"])
        #expect(generated != "first.1" && generated.count == 15)
        #expect(second.headers["X-Method"] == "GET")
        #expect(second.body.isEmpty)
        let third = try connection.request("PURGE", "/three", headers: [("X-Request-Id", "third.3")])
        #expect(third.headers["X-Method"] == "PURGE")  // a method Quire does not serve is passed on as sent
        #expect(third.headers["X-Request-Id"] == "third.3")
        #expect(!connection.isClosedByPeer)
    }

    /// A connection's requests write their fields into one buffer, kept from request to request, when no earlier
    /// request still holds it: a request a handler keeps must keep its own fields, and a reused buffer must hold
    /// only the new request's.
    @Test("a request's fields stay its own when its connection's next request reuses their buffer")
    func fieldsOfKeptRequests() throws {
        let kept = Mutex<[Request]>([])
        let server = try TestServer(
            responder: ClosureResponder { request in
                if request.queryValue("keep") != nil { kept.withLock { $0.append(request) } }
                let seen = "\(request.headers["X-N"] ?? "-") \(request.queryValue("n") ?? "-") \(request.headers.count)"
                return .response(Response(status: 200, body: Array(seen.utf8)))
            })
        defer { server.stop() }
        let connection = try server.connect()
        // Sizes that fit the kept buffer, outgrow it, then fall past what a connection keeps (4 KB), and back.
        let sizes = [1, 30, 2, 200, 0, 3_000, 5, 6_000, 7, 8, 20, 4, 10, 9]
        for (index, size) in sizes.enumerated() {
            let value = String(repeating: Character(UnicodeScalar(UInt8(97 + index % 26))), count: size)
            var headers = [("X-N", value)]
            if index % 3 == 0 { headers.append(("X-Extra", "extra")) }
            let keep = index % 2 == 1 ? "&keep" : ""
            let response = try connection.request("GET", "/f?n=\(index)\(keep)", headers: headers)
            #expect(response.status == 200)
            let fields = response.text.split(separator: " ", omittingEmptySubsequences: false)
            #expect(fields.count == 3)
            #expect(fields.first.map(String.init) == (size == 0 ? "" : value), "request \(index)")
            #expect(fields.dropFirst().first == "\(index)"[...], "request \(index)")
        }
        #expect(!connection.isClosedByPeer)
        let requests = kept.withLock { $0 }
        #expect(requests.count == sizes.count / 2)
        for request in requests {
            let index = try #require(request.queryValue("n").flatMap { Int($0) })
            let value = String(repeating: Character(UnicodeScalar(UInt8(97 + index % 26))), count: sizes[index])
            #expect(request.headers["X-N"] == value, "kept request \(index)")
            #expect(request.headers["X-Extra"] == (index % 3 == 0 ? "extra" : nil), "kept request \(index)")
        }
    }

    @Test("a generated request id is the 15 hex digits of its prefix and counter, zero-padded")
    func generatedRequestIDs() {
        var generator = SystemRandomNumberGenerator()
        var cases: [(UInt32, UInt32)] = [
            (0, 0), (1, 1), (0x0FFF_FFFF, .max), (0x0ABC_DEF0, 0x1234_5678), (0, 0xA0B0_C0D9),
        ]
        for _ in 0..<1_000 { cases.append((UInt32.random(in: 0..<(1 << 28), using: &generator), generator.next())) }
        for (prefix, counter) in cases {
            let hex = String(UInt64(prefix) << 32 | UInt64(counter), radix: 16)
            #expect(
                RequestIdentifier.format(prefix: prefix, counter: counter)
                    == String(repeating: "0", count: 15 - hex.count) + hex)
        }
        let (first, second) = (RequestIdentifier.generate(), RequestIdentifier.generate())
        #expect(first.utf8.count == 15 && second.utf8.count == 15 && first != second)
        #expect(
            first.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            })
    }

    @Test("the server takes exactly the known methods as literals")
    func knownMethods() {
        for method in Request.knownMethods {
            #expect(HTTPServer.knownMethod(method) == method)
        }
        for method in ["PURGE", "GE", "GETS", "PROPFIND", "get", ""] {
            #expect(HTTPServer.knownMethod(method) == nil)
        }
    }

    @Test("a request's fields: header names ignore case, query names do not; values decoded as String(decoding:) does")
    func requestFields() {
        let invalid = String(decoding: [0x76, 0xFF, 0x6C], as: UTF8.self)  // "v\u{FFFD}l": repaired
        let headers = RequestFields(headers: [
            NamedValue(name: "Host", value: "example.com"), NamedValue(name: "Accept", value: "a"),
            NamedValue(name: "accept", value: "b"), NamedValue(name: "X-Empty", value: ""),
            NamedValue(name: "X-Bad", value: invalid),
        ])
        #expect(headers["HOST"] == "example.com")
        #expect(headers["host"] == "example.com")
        #expect(headers["Hos"] == nil)
        #expect(headers["Accept"] == "a")
        #expect(headers.values(for: "ACCEPT") == ["a", "b"])
        #expect(headers["x-empty"] == "")
        #expect(headers.contains("X-Empty"))
        #expect(!headers.contains("X-Missing"))
        #expect(headers["X-Bad"] == invalid)
        #expect(headers.count == 5)
        #expect(headers.map(\.name) == ["Host", "Accept", "accept", "X-Empty", "X-Bad"])
        let without = headers.removing("ACCEPT")
        #expect(without.map(\.name) == ["Host", "X-Empty", "X-Bad"])
        #expect(without["accept"] == nil)
        let query = RequestFields(query: [
            NamedValue(name: "limit", value: "20"), NamedValue(name: "Limit", value: "5"),
        ])
        #expect(query["limit"] == "20")
        #expect(query["Limit"] == "5")
        #expect(query["LIMIT"] == nil)
        // The lookups above name literals, which take the `StaticString` forms; names held in strings take the
        // others, with the same answers.
        let headerNames: [(String, String?)] = [
            ("HOST", "example.com"), ("host", "example.com"), ("Hos", nil), ("Accept", "a"), ("x-empty", ""),
            ("X-Missing", nil), ("X-Bad", invalid), ("", nil),
        ]
        for (name, value) in headerNames { #expect(headers[name] == value, "\(name)") }
        for (name, value) in [("limit", "20"), ("Limit", "5"), ("LIMIT", nil)] as [(String, String?)] {
            #expect(query[name] == value, "\(name)")
            #expect(query.withValue(of: name) { $0.count } == value?.utf8.count)
        }
        #expect(query.withValue(of: "limit") { $0.count } == 2)
        #expect(RequestFields(query: []).isEmpty)
        #expect(RequestFields(query: [])["limit"] == nil)
        #expect(Request(method: "GET", path: "/", query: [NamedValue(name: "a", value: "")]).queryValue("a") == "")
    }

    @Test("request headers are case-insensitive")
    func requestHeaders() throws {
        let server = try TestServer(responder: Responders.echo)
        defer { server.stop() }
        let response = try server.request("GET", "/", headers: [("X-TEST", "value")])
        #expect(response.headers["X-Echo-Header"] == "value")
    }

    @Test("a body declared over the limit gets 413 before it is read")
    func declaredBodyTooLarge() throws {
        let server = try TestServer(responder: Responders.echo) { $0.maxBodyBytes = 1000 }
        defer { server.stop() }
        let connection = try server.connect()
        try connection.write(HTTPClientConnection.head("PUT", "/any/route", bodyLength: 5000))
        let response = try connection.readResponse()
        #expect(response.status == 413)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.text.contains("413"))
    }

    /// 20 MB is far past the limit (and past any multiple of it the server might cut at): the client still
    /// sends it all and reads its 413, as from nginx.
    @Test("a chunked body over the limit gets 413, however large", arguments: [1001, 50_000, 2_000_000, 20_000_000])
    func chunkedBodyTooLarge(size: Int) throws {
        let server = try TestServer(responder: Responders.echo) { $0.maxBodyBytes = 1000 }
        defer { server.stop() }
        let connection = try server.connect()
        let response = try connection.request(
            "POST", "/upload", body: [UInt8](repeating: 65, count: size), chunked: size > 100_000 ? 65_536 : 700)
        #expect(response.status == 413)
        #expect(response.headers["Content-Type"] == "application/problem+json")
    }

    @Test("a body at the limit is accepted, chunked or not")
    func bodyAtLimit() throws {
        let server = try TestServer(responder: Responders.echo) { $0.maxBodyBytes = 1000 }
        defer { server.stop() }
        let body = (0..<1000).map { UInt8($0 % 251) }
        let connection = try server.connect()
        #expect(try connection.request("POST", "/", body: body).body == body)
        #expect(try connection.request("POST", "/", body: body, chunked: 333).body == body)
    }

    @Test("a body that arrives in several pieces comes out whole")
    func bodyInPieces() throws {
        let server = try TestServer(responder: Responders.echo)
        defer { server.stop() }
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let connection = try server.connect()
        try connection.write(HTTPClientConnection.head("PUT", "/pieces", bodyLength: body.count))
        var offset = 0
        for size in [1, 10, 1000, 65_536, 100_000] {
            try connection.write(Array(body[offset..<offset + size]))
            offset += size
            sleep(milliseconds: 20)
        }
        try connection.write(Array(body[offset...]))
        let response = try connection.readResponse()
        #expect(response.status == 200)
        #expect(response.body == body)
    }

    @Test("HEAD answers the headers without a body, and the connection stays usable")
    func head() throws {
        let server = try TestServer(responder: Responders.echo)
        defer { server.stop() }
        let connection = try server.connect()
        let head = try connection.request("HEAD", "/thing")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.headers["X-Method"] == "HEAD")
        let next = try connection.request("POST", "/after", body: Array("x".utf8))
        #expect(next.text == "x")
    }

    @Test("a deferred response resumed from another thread")
    func deferredResponse() throws {
        let server = try TestServer(responder: Responders.deferred(milliseconds: 100))
        defer { server.stop() }
        let connection = try server.connect()
        let clock = ContinuousClock()
        let start = clock.now
        let response = try connection.request("GET", "/wait")
        #expect(response.status == 200)
        #expect(response.text == "later /wait")
        #expect(clock.now - start >= .milliseconds(90))
        // The connection is kept alive across a suspend and resume.
        #expect(try connection.request("GET", "/again").text == "later /again")
    }

    @Test("a deferred response resolved before the handler returns is answered at once")
    func deferredResolvedEarly() throws {
        let responder = ClosureResponder { _ in
            let pending = PendingResponse { Response(status: 503) }
            #expect(pending.resume(with: Response(status: 201, text: "early")))
            #expect(!pending.resume(with: Response(status: 500)))
            return .deferred(pending)
        }
        let server = try TestServer(responder: responder)
        defer { server.stop() }
        let response = try server.request("GET", "/")
        #expect(response.status == 201)
        #expect(response.text == "early")
    }

    @Test("many deferred responses resumed concurrently, each exactly once")
    func deferredRace() throws {
        let delivered = Atomic<Int>(0)
        let attempts = Atomic<Int>(0)
        let responder = ClosureResponder { _ in
            let pending = PendingResponse { Response(status: 503) }
            for _ in 0..<3 {
                DetachedThread.start {
                    if pending.resume(with: Response(status: 200, text: "ok")) {
                        delivered.add(1, ordering: .relaxed)
                    }
                    attempts.add(1, ordering: .sequentiallyConsistent)
                }
            }
            return .deferred(pending)
        }
        let server = try TestServer(responder: responder)
        defer { server.stop() }
        try concurrently(8) { _ in
            let connection = try server.connect()
            for _ in 0..<25 {
                let response = try connection.request("GET", "/race")
                #expect(response.status == 200)
            }
        }
        // The client has its answer as soon as the winner resumed, maybe before the winner counted it:
        // count once every resuming thread is done.
        let deadline = ContinuousClock.now + .seconds(30)
        while attempts.load(ordering: .sequentiallyConsistent) < 600 && ContinuousClock.now < deadline {
            sleep(milliseconds: 5)
        }
        #expect(attempts.load(ordering: .sequentiallyConsistent) == 600)
        #expect(delivered.load(ordering: .relaxed) == 200)
    }

    @Test("50 concurrent clients on keep-alive connections")
    func concurrentClients() throws {
        let server = try TestServer(responder: Responders.echo)
        defer { server.stop() }
        try concurrently(50) { client in
            let connection = try server.connect()
            for index in 0..<20 {
                let body = Array("client \(client) request \(index)".utf8)
                let response = try connection.request("POST", "/c/\(client)", body: body)
                #expect(response.status == 200)
                #expect(response.body == body)
            }
        }
    }

    @Test("shutdown lets in-flight requests finish and refuses new connections")
    func shutdownWithRequestsInFlight() throws {
        let server = try TestServer(responder: Responders.slow(milliseconds: 600))
        let port = server.port
        let statuses = Mutex<[Int]>([])
        let opened = Atomic<Int>(0)
        let refusedAfterStop = Mutex<Bool?>(nil)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        DetachedThread.start {
            // Stop once the four connections are accepted (one still in the kernel's accept queue is
            // reset when the listening socket closes); with two worker threads and 600 ms handlers,
            // requests are being handled or waiting for a thread while the server drains.
            while opened.load(ordering: .relaxed) < 4 || server.server.connectionCount < 4, clock.now < deadline {
                sleep(milliseconds: 2)
            }
            server.stop()
            // Checked at once: other tests running in parallel may bind this port number later.
            let refused = (try? HTTPClientConnection(host: "127.0.0.1", port: port, timeoutSeconds: 1)) == nil
            refusedAfterStop.withLock { $0 = refused }
        }
        try concurrently(4) { _ in
            let connection = try server.connect()
            try connection.write(HTTPClientConnection.head("GET", "/slow", bodyLength: nil))
            opened.add(1, ordering: .relaxed)
            let response = try connection.readResponse()
            statuses.withLock { $0.append(response.status) }
            // Kept open until the server stopped, so that it counts all four connections.
            while refusedAfterStop.withLock({ $0 }) == nil && clock.now < deadline + .seconds(15) {
                sleep(milliseconds: 2)
            }
        }
        #expect(statuses.withLock { $0 } == [200, 200, 200, 200])
        while refusedAfterStop.withLock({ $0 }) == nil && clock.now < deadline + .seconds(15) {
            sleep(milliseconds: 2)
        }
        #expect(refusedAfterStop.withLock { $0 } == true)
        #expect(server.server.port == nil)
    }

    @Test("responses sent while draining close their connection")
    func drainingClosesConnections() throws {
        let server = try TestServer(responder: Responders.slow(milliseconds: 300)) { $0.threads = 1 }
        let connection = try server.connect()
        try connection.write(HTTPClientConnection.head("GET", "/slow", bodyLength: nil))
        DetachedThread.start {
            while server.server.inFlightCount == 0 { sleep(milliseconds: 2) }
            server.stop()
        }
        let response = try connection.readResponse()
        #expect(response.status == 200)
        #expect(response.headers["Connection"]?.lowercased() == "close")
    }

    @Test("shutdown answers every pending deferred response")
    func shutdownResumesPending() throws {
        let responder = ClosureResponder { _ in
            .deferred(PendingResponse { Response(status: 503, text: "bye") })  // never resumed by anyone else
        }
        let server = try TestServer(responder: responder)
        let responses = Mutex<[ClientResponse]>([])
        DetachedThread.start {
            while server.server.inFlightCount < 5 { sleep(milliseconds: 5) }
            server.stop()
        }
        try concurrently(5) { _ in
            let response = try server.connect().request("GET", "/forever")
            responses.withLock { $0.append(response) }
        }
        #expect(responses.withLock { $0.map(\.status) } == [503, 503, 503, 503, 503])
        #expect(responses.withLock { $0.allSatisfy { $0.text == "bye" } })
    }

    @Test("shutdown with no drain time while other threads resume deferred responses: no crash, no hang")
    func shutdownRacingResumes() throws {
        for round in 0..<20 {
            let waiting = Mutex<[PendingResponse]>([])
            let responder = ClosureResponder { _ in
                let pending = PendingResponse { Response(status: 503, text: "bye") }
                waiting.withLock { $0.append(pending) }
                return .deferred(pending)
            }
            let server = try TestServer(responder: responder) { $0.drainTimeoutSeconds = 0 }
            let statuses = Mutex<[Int]>([])
            let stopped = Mutex(false)
            DetachedThread.start {
                let deadline = ContinuousClock.now + .seconds(10)
                while server.server.inFlightCount < 8 && ContinuousClock.now < deadline { sleep(milliseconds: 1) }
                // Resumers and the shutdown start together: some resumes are decided while it stops.
                for pending in waiting.withLock({ $0 }) {
                    DetachedThread.start { pending.resume(with: Response(status: 200, text: "ok")) }
                }
                server.stop()
                stopped.withLock { $0 = true }
            }
            try concurrently(8) { _ in
                // With no drain time a response may still be unsent when the connections are closed.
                let status = (try? server.connect().request("GET", "/wait"))?.status ?? 0
                statuses.withLock { $0.append(status) }
            }
            #expect(statuses.withLock { $0.allSatisfy { [0, 200, 503].contains($0) } }, "round \(round)")
            // The clients see their connections closed before the shutdown has returned: wait for it (the
            // hang this guards against is a shutdown that never returns).
            let deadline = ContinuousClock.now + .seconds(30)
            while !stopped.withLock({ $0 }) && ContinuousClock.now < deadline { sleep(milliseconds: 5) }
            #expect(stopped.withLock { $0 }, "round \(round): the shutdown returned")
            #expect(server.server.port == nil, "round \(round): stopped")
        }
    }

    @Test("a second start fails, and a taken port is a clear error")
    func startErrors() throws {
        let server = try TestServer(responder: Responders.echo)
        defer { server.stop() }
        #expect(throws: HTTPServerError.alreadyStarted) { try server.server.start() }
        var configuration = HTTPServer.Configuration()
        configuration.port = server.port
        let second = HTTPServer(configuration: configuration, logger: TestServer.logger, responder: Responders.echo)
        let error = #expect(throws: HTTPServerError.self) { try second.start() }
        #expect(error?.description.contains("cannot listen on 127.0.0.1:\(server.port)") == true)
    }

    @Test("invalid settings are refused before binding")
    func invalidConfiguration() {
        var configuration = HTTPServer.Configuration()
        configuration.host = "not-an-address"
        let server = HTTPServer(configuration: configuration, logger: TestServer.logger, responder: Responders.echo)
        #expect(throws: HTTPServerError.invalidHost("not-an-address")) { try server.start() }
        configuration.host = "127.0.0.1"
        configuration.threads = 0
        let other = HTTPServer(configuration: configuration, logger: TestServer.logger, responder: Responders.echo)
        #expect(throws: HTTPServerError.self) { try other.start() }
    }
}
