import Glibc
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

/// The server's limits under abuse, for real over loopback: each holds while the server keeps
/// answering well-behaved clients.
@Suite("Limits under abuse", .serialized)
struct LimitsTests {
    /// Whether the server closed `connection` (a request on it fails or gets no answer).
    static func isCut(_ connection: HTTPClientConnection) -> Bool {
        (try? connection.request("GET", "/probe")) == nil
    }

    @Test("connections beyond the limit get no service while the others keep being answered")
    func connectionLimit() throws {
        // Two worker threads: the limit holds across them (libmicrohttpd's own is split between them).
        let server = try TestServer(responder: Responders.echo) {
            $0.connectionLimit = 4
            $0.threads = 2
        }
        defer { server.stop() }
        let held = try (0..<4).map { _ in try server.connect(timeoutSeconds: 2) }
        for connection in held { #expect(try connection.request("GET", "/ok").status == 200) }
        // At the limit the fifth is closed at once: the client learns it without waiting for a timeout.
        let extra = try server.connect(timeoutSeconds: 5)
        let clock = ContinuousClock()
        let connected = clock.now
        while !extra.isClosedByPeer && clock.now - connected < .seconds(5) { sleep(milliseconds: 5) }
        #expect(extra.isClosedByPeer)
        #expect(Self.isCut(extra))
        extra.close()
        for connection in held { #expect(try connection.request("GET", "/still").status == 200) }
        held[0].close()
        sleep(milliseconds: 200)
        #expect(try server.connect(timeoutSeconds: 2).request("GET", "/again").status == 200)
    }

    @Test("exactly the limit is served, whatever thread each connection lands on; the next is refused")
    func limitIsGlobal() throws {
        for round in 0..<20 {
            let server = try TestServer(responder: Responders.echo) {
                $0.connectionLimit = 4
                $0.threads = 2
            }
            let held = try (0..<4).map { _ in try server.connect(timeoutSeconds: 5) }
            for connection in held {
                #expect((try? connection.request("GET", "/ok"))?.status == 200, "round \(round)")
            }
            let extra = try server.connect(timeoutSeconds: 5)
            #expect(Self.isCut(extra), "round \(round)")
            #expect(server.server.refusedConnections == 1, "round \(round)")
            held.forEach { $0.close() }
            server.stop()
        }
    }

    @Test(
        "a burst over the limit on one thread: the limit is served, the rest refused, shutdown returns",
        .timeLimit(.minutes(1)))
    func burstOverTheLimit() throws {
        // libmicrohttpd 0.9.75 deadlocks a worker whose own limit check fails on a handed-over
        // connection; the accepting thread's cap must keep that check from ever failing.
        for round in 0..<20 {
            let server = try TestServer(responder: Responders.echo) {
                $0.connectionLimit = 2
                $0.threads = 1
            }
            let statuses = Mutex<[Int]>([])
            try concurrently(4) { _ in
                let status = (try? server.connect(timeoutSeconds: 5).request("GET", "/burst"))?.status ?? 0
                statuses.withLock { $0.append(status) }
            }
            // Served or refused, never stuck: a stuck worker would time the requests out.
            #expect(statuses.withLock { $0.filter { $0 == 200 }.count } >= 2, "round \(round)")
            server.stop()
        }
    }

    @Test("connections beyond the per-IP limit are refused")
    func perIPLimit() throws {
        let server = try TestServer(responder: Responders.echo) { $0.perIPConnectionLimit = 2 }
        defer { server.stop() }
        let held = try (0..<2).map { _ in try server.connect(timeoutSeconds: 2) }
        for connection in held { #expect(try connection.request("GET", "/ok").status == 200) }
        #expect(Self.isCut(try server.connect(timeoutSeconds: 2)))
        #expect(try held[1].request("GET", "/still").status == 200)
    }

    @Test("a client that stalls in the middle of a request is cut at the connection timeout")
    func stalledRequest() throws {
        let server = try TestServer(responder: Responders.echo) { $0.connectionTimeoutSeconds = 1 }
        defer { server.stop() }
        let slow = try server.connect(timeoutSeconds: 5)
        try slow.write(Array("GET /trickle HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8))
        for _ in 0..<3 {
            try slow.write(Array("a".utf8))
            sleep(milliseconds: 300)  // still sending: not idle
        }
        let clock = ContinuousClock()
        let stalled = clock.now
        while !slow.isClosedByPeer && clock.now - stalled < .seconds(5) {
            #expect(try server.connect().request("GET", "/meanwhile").status == 200)
            sleep(milliseconds: 100)
        }
        #expect(slow.isClosedByPeer)
        #expect(clock.now - stalled < .seconds(4))
    }

    @Test("a client that trickles a request, however steadily, is cut at the request timeout")
    func trickledRequest() throws {
        let server = try TestServer(responder: Responders.echo) {
            $0.connectionTimeoutSeconds = 30
            $0.requestTimeoutSeconds = 1
        }
        defer { server.stop() }
        let slow = try server.connect(timeoutSeconds: 5)
        let clock = ContinuousClock()
        let start = clock.now
        try slow.write(Array("POST /trickle HTTP/1.1\r\nHost: x\r\n".utf8))
        var cut = false
        for index in 0..<40 {  // a byte every 100 ms: never idle
            if (try? slow.write(Array("X-\(index): y\r\n".utf8))) == nil || slow.isClosedByPeer {
                cut = true
                break
            }
            #expect(try server.connect().request("GET", "/meanwhile").status == 200)
            sleep(milliseconds: 100)
        }
        #expect(cut || slow.isClosedByPeer)
        #expect(clock.now - start < .seconds(3))
        #expect(server.server.lateRequestsCut == 1)
    }

    @Test("a request answered later (a long poll) is not cut by the request timeout")
    func deferredOutlivesRequestTimeout() throws {
        let server = try TestServer(responder: Responders.deferred(milliseconds: 1500)) {
            $0.requestTimeoutSeconds = 0.5
        }
        defer { server.stop() }
        #expect(try server.connect().request("GET", "/poll").text == "later /poll")
        #expect(server.server.lateRequestsCut == 0)
    }

    @Test("a header block over the connection memory is refused, the connection closed")
    func oversizedHeaders() throws {
        let server = try TestServer(responder: Responders.echo) { $0.connectionMemoryBytes = 16 << 10 }
        defer { server.stop() }
        let connection = try server.connect()
        let big = String(repeating: "x", count: 32 << 10)
        let response = try? connection.request("GET", "/", headers: [("X-Big", big)])
        #expect(response.map { $0.status == 431 || $0.status == 413 || $0.status == 400 } ?? true)
        #expect(try server.connect().request("GET", "/fine").status == 200)
    }

    @Test("the default connection memory takes 10 KB of header fields (a large token and cookies)")
    func largeHeadersFitTheDefault() throws {
        let server = try TestServer(responder: Responders.echo)
        defer { server.stop() }
        let connection = try server.connect()
        // libmicrohttpd parses a Cookie header on a copy in the same memory: it counts twice.
        let cookie = String(repeating: "c", count: 2 << 10)
        let token = String(repeating: "t", count: 8 << 10)
        let response = try connection.request(
            "GET", "/large", headers: [("Cookie", "a=\(cookie)"), ("Authorization", "Bearer \(token)")])
        #expect(response.status == 200)
        #expect(try connection.request("GET", "/next").status == 200)
    }

    @Test("a body over the limit declared or sent is refused on every route, without reading it all")
    func bodyFlood() throws {
        let server = try TestServer(responder: Responders.echo) { $0.maxBodyBytes = 1024 }
        defer { server.stop() }
        // 64 MiB declared: answered 413 at once, no body read.
        let connection = try server.connect()
        try connection.write(HTTPClientConnection.head("POST", "/any", bodyLength: 64 << 20))
        #expect(try connection.readResponse().status == 413)
        #expect(try server.connect().request("GET", "/fine").status == 200)
    }
}
