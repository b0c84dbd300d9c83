import Foundation
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

/// HTTPS on a real server: real handshakes over loopback with certificates made by openssl for the test.
@Suite("HTTPS", .serialized)
struct TLSTests {
    @Test("keep-alive requests over TLS 1.3; the server presents its certificate")
    func servesHTTPS() throws {
        let certificates = try TestCertificates()
        let tls = try certificates.issue("server", serial: "0a01")
        let server = try TestServer(responder: Responders.echo) { $0.tls = tls }
        defer { server.stop() }
        #expect(server.server.tlsCertificate?.serial == "0a01")
        let connection = try server.connect(tls: certificates.clientTLS)
        #expect(connection.tlsProtocol == "TLS1.3")
        #expect(connection.peerCertificateSerial == "0a01")
        for index in 0..<20 {
            let response = try connection.request("POST", "/echo?n=\(index)", body: Array("body \(index)".utf8))
            #expect(response.status == 200)
            #expect(response.text == "body \(index)")
            #expect(response.headers["X-Query"] == "n=\(index)")
        }
        // An RSA certificate works as well.
        let rsa = try certificates.issue("rsa", serial: "0b02", rsa: true)
        let rsaServer = try TestServer(responder: Responders.echo) { $0.tls = rsa }
        defer { rsaServer.stop() }
        #expect(try rsaServer.connect(tls: certificates.clientTLS).request("GET", "/x").status == 200)
    }

    @Test("a client that pipelines requests and reads nothing until the server's buffers are full gets every answer")
    func pipelinedWithoutReading() throws {
        // A small response's TLS records are held back and sent whole when it completes (tls.c). This client
        // fills the server's send buffer first: the answers after that must go out uncorked, whole, in order.
        let certificates = try TestCertificates()
        let server = try TestServer(responder: Responders.numbered) {
            $0.tls = try? certificates.issue("s", serial: "01")
        }
        defer { server.stop() }
        let connection = try server.connect(tls: certificates.clientTLS)
        let count = 600  // 4.8 MB of answers: far more than loopback's socket buffers hold unread
        try connection.write(Array((0..<count).map { "GET /?n=\($0) HTTP/1.1\r\nHost: quire\r\n\r\n" }.joined().utf8))
        sleep(milliseconds: 500)
        for index in 0..<count {
            let response = try connection.readResponse()
            #expect(response.status == 200)
            guard response.body == Responders.numberedBody("\(index)") else {
                Issue.record("answer \(index) is not the answer to request \(index) (\(response.body.count) bytes)")
                return
            }
        }
        #expect(
            try server.connect(tls: certificates.clientTLS).request("GET", "/?n=7").body == Responders.numberedBody("7")
        )
    }

    @Test("records the server reads in one go are all answered: a request's head and body apart, the next behind them")
    func recordsReadTogether() throws {
        // The server reads all that its socket holds at once and keeps what GnuTLS has not asked for yet (tls.c,
        // quire_tls_pull). Kept bytes must be served like bytes still in the socket: no answer may wait for more.
        let certificates = try TestCertificates()
        let responder = ClosureResponder { request in
            if request.path == "/slow" { sleep(milliseconds: 200) }
            return .response(Response(status: 200, body: Array("\(request.path) \(request.body.count)".utf8)))
        }
        let server = try TestServer(responder: responder) { $0.tls = try? certificates.issue("s", serial: "01") }
        defer { server.stop() }
        let connection = try server.connect(timeoutSeconds: 5, tls: certificates.clientTLS)
        for size in [10, 3_000, 100_000] {
            // Each write is one TLS record or more; while the server sits in the slow handler, the records of the
            // two requests behind it wait in its socket, and are read together after it.
            try connection.write(Array("GET /slow HTTP/1.1\r\nHost: quire\r\n\r\n".utf8))
            sleep(milliseconds: 50)
            let body = [UInt8](repeating: UInt8(ascii: "b"), count: size)
            try connection.write(Array("POST /posted HTTP/1.1\r\nHost: quire\r\nContent-Length: \(size)\r\n\r\n".utf8))
            try connection.write(body)
            try connection.write(Array("GET /last HTTP/1.1\r\nHost: quire\r\n\r\n".utf8))
            #expect(try connection.readResponse().text == "/slow 0")
            #expect(try connection.readResponse().text == "/posted \(size)")
            #expect(try connection.readResponse().text == "/last 0")
        }
    }

    @Test("a client that does not trust the certificate, or speaks plain HTTP, fails; the server goes on")
    func refusals() throws {
        let certificates = try TestCertificates()
        let server = try TestServer(responder: Responders.echo) { $0.tls = try? certificates.issue("s", serial: "01") }
        defer { server.stop() }
        let stranger = try TestCertificates()
        #expect(throws: HTTPClientError.self) { _ = try server.connect(tls: stranger.clientTLS) }
        let wrongName = ClientTLS(certificateAuthorityFile: certificates.authorityFile, serverName: "example.org")
        #expect(throws: HTTPClientError.self) { _ = try server.connect(tls: wrongName) }
        let plain = try server.connect(timeoutSeconds: 2)
        #expect(throws: HTTPClientError.self) { _ = try plain.request("GET", "/x") }
        #expect(try server.connect(tls: certificates.clientTLS).request("GET", "/x").status == 200)
    }

    @Test("reload: new handshakes get the new certificate, open connections keep theirs, a bad file changes nothing")
    func reload() throws {
        let certificates = try TestCertificates()
        let first = try certificates.issue("first", serial: "1001")
        let live = TLSConfiguration(
            certificateFile: certificates.path("live.pem"), keyFile: certificates.path("live.key"))
        try Self.install(first, as: live)
        let server = try TestServer(responder: Responders.echo) { $0.tls = live }
        defer { server.stop() }
        let open = try server.connect(tls: certificates.clientTLS)
        #expect(open.peerCertificateSerial == "1001")

        try Self.install(try certificates.issue("second", serial: "2002"), as: live)
        #expect(try server.server.reloadCertificate().serial == "2002")
        #expect(try server.connect(tls: certificates.clientTLS).peerCertificateSerial == "2002")
        #expect(try open.request("GET", "/still").status == 200)  // the open connection goes on

        try Data("-----BEGIN CERTIFICATE-----\nbroken\n".utf8).write(to: URL(fileURLWithPath: live.certificateFile))
        #expect(throws: HTTPServerError.self) { try server.server.reloadCertificate() }
        #expect(server.server.tlsCertificate?.serial == "2002")
        #expect(try server.connect(tls: certificates.clientTLS).peerCertificateSerial == "2002")
    }

    @Test("each unusable certificate or key has its own message naming the file")
    func badFiles() throws {
        let certificates = try TestCertificates()
        let good = try certificates.issue("good", serial: "01")
        let other = try certificates.issue("other", serial: "02")
        let garbage = certificates.path("garbage.pem")
        try "not a certificate\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        func message(_ tls: TLSConfiguration) -> String {
            do {
                _ = try HTTPServer.check(tls)
                return "accepted"
            } catch {
                return error.description
            }
        }
        var tls = good
        tls.certificateFile = "/nonexistent/cert.pem"
        #expect(message(tls) == "TLS: /nonexistent/cert.pem: No such file or directory")
        tls = good
        tls.keyFile = certificates.directory  // a folder: unreadable as a file
        #expect(message(tls) == "TLS: \(certificates.directory): Is a directory")
        tls = good
        tls.certificateFile = garbage
        #expect(message(tls).hasPrefix("TLS: \(garbage): no PEM certificate could be read"))
        tls = good
        tls.keyFile = garbage
        #expect(message(tls).hasPrefix("TLS: \(garbage): no PEM private key could be read"))
        tls = good
        tls.keyFile = other.keyFile
        #expect(
            message(tls) == "TLS: \(other.keyFile): this key does not match the certificate in \(good.certificateFile)")
        tls = good
        tls.priorities = "NORMAL:+NO-SUCH-THING"
        #expect(message(tls).contains("invalid TLS priority string"))
        #expect(message(tls).contains("NO-SUCH-THING"))
        let empty = certificates.path("empty.pem")
        try "".write(toFile: empty, atomically: true, encoding: .utf8)
        tls = good
        tls.certificateFile = empty
        #expect(message(tls) == "TLS: \(empty): the file is empty")
        // The server refuses to start with them too, before binding.
        tls = good
        tls.keyFile = other.keyFile
        let bad = tls
        #expect(throws: HTTPServerError.self) { _ = try TestServer(responder: Responders.echo) { $0.tls = bad } }
    }

    @Test("an encrypted key needs its password")
    func encryptedKey() throws {
        let certificates = try TestCertificates()
        var tls = try certificates.issue("server", serial: "03")
        let encrypted = certificates.path("encrypted.key")
        try TestCertificates.openssl([
            "pkcs8", "-topk8", "-in", tls.keyFile, "-out", encrypted, "-passout", "pass:sesame", "-v2", "aes-256-cbc",
        ])
        tls.keyFile = encrypted
        #expect(throws: HTTPServerError.self) { _ = try HTTPServer.check(tls) }
        tls.keyPassword = "wrong"
        #expect(throws: HTTPServerError.self) { _ = try HTTPServer.check(tls) }
        tls.keyPassword = "sesame"
        #expect(try HTTPServer.check(tls).serial == "03")
        let configured = tls
        let server = try TestServer(responder: Responders.echo) { $0.tls = configured }
        defer { server.stop() }
        #expect(try server.connect(tls: certificates.clientTLS).request("GET", "/x").status == 200)
    }

    @Test("an expired certificate loads, with a warning")
    func expired() throws {
        let certificates = try TestCertificates()
        let summary = try HTTPServer.check(try certificates.issue("old", serial: "04", days: -1))
        #expect(summary.warnings().contains { $0.contains("expired") })
        let fresh = try HTTPServer.check(try certificates.issue("new", serial: "05", days: 60))
        #expect(fresh.warnings().isEmpty)
    }

    @Test("many concurrent fresh handshakes while reloading: every request answered")
    func reloadUnderLoad() throws {
        let certificates = try TestCertificates()
        let live = TLSConfiguration(
            certificateFile: certificates.path("live.pem"), keyFile: certificates.path("live.key"))
        let serials = ["a1", "b2", "c3", "d4"]
        let issued = try serials.map { try certificates.issue($0, serial: $0) }
        try Self.install(issued[0], as: live)
        let server = try TestServer(responder: Responders.echo) { $0.tls = live }
        defer { server.stop() }
        let stop = Atomic<Bool>(false)
        let seen = Mutex<Set<String>>([])
        let requests = Atomic<Int>(0)
        let reloader = DetachedThread.startJoinable {
            for next in issued.dropFirst() {
                sleep(milliseconds: 150)
                try? Self.install(next, as: live)
                _ = try? server.server.reloadCertificate()
            }
            sleep(milliseconds: 150)
            stop.store(true, ordering: .relaxed)
        }
        try concurrently(4) { _ in
            while !stop.load(ordering: .relaxed) {
                let connection = try server.connect(tls: certificates.clientTLS)
                let response = try connection.request("GET", "/x")
                guard response.status == 200 else { throw HTTPClientError("status \(response.status)") }
                requests.add(1, ordering: .relaxed)
                if let serial = connection.peerCertificateSerial { _ = seen.withLock { $0.insert(serial) } }
            }
        }
        reloader.join()
        #expect(requests.load(ordering: .relaxed) > 20)
        #expect(seen.withLock { $0 }.contains("d4"))
    }

    /// Copies a certificate and key over the files a server is configured with (as a renewal does).
    static func install(_ source: TLSConfiguration, as target: TLSConfiguration) throws {
        for (from, to) in [(source.certificateFile, target.certificateFile), (source.keyFile, target.keyFile)] {
            let data = try Data(contentsOf: URL(fileURLWithPath: from))
            try data.write(to: URL(fileURLWithPath: to), options: .atomic)
        }
    }
}
