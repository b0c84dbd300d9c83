import Foundation
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

/// `quire serve` over HTTPS, as an operator runs it: real handshakes over loopback, curl as the client,
/// certificates made by openssl for the test, SIGHUP to rotate them.
@Suite("quire serve over HTTPS", .serialized)
struct HTTPSTests {
    /// A `quire serve` child on port 0 serving `tls`, lists in memory, JSON logs.
    static func serve(_ tls: TLSConfiguration, environment: [String: String] = [:]) throws -> QuireProcess {
        try QuireProcess(
            ["serve", "--port", "0", "--log-format", "json", "--threads", "2"],
            environment: [
                "QUIRE_STORAGE_PATH": ":memory:", "QUIRE_SERVER_TLS_CERTIFICATE_FILE": tls.certificateFile,
                "QUIRE_SERVER_TLS_KEY_FILE": tls.keyFile,
            ].merging(environment) { $1 })
    }

    /// curl with the test CA; its output (the body, then `-w` text).
    static func curl(_ certificates: TestCertificates, _ arguments: [String]) throws -> String {
        try TestCertificates.run(
            "/usr/bin/curl",
            ["-sS", "--fail-with-body", "--max-time", "20", "--cacert", certificates.authorityFile] + arguments)
    }

    static func json(_ text: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
    }

    @Test("pages, sessions and long polls over HTTPS with curl --cacert")
    func curlOverHTTPS() throws {
        let certificates = try TestCertificates()
        let child = try Self.serve(try certificates.issue("server", serial: "51"))
        let port = try child.waitForPort()
        try child.waitUntilReady(port: port, tls: certificates.clientTLS)
        let base = "https://localhost:\(port)"
        // A page, twice on one kept-alive connection (HTTP/1.1 over TLS 1.3).
        let pages = try Self.curl(
            certificates,
            [
                "--tlsv1.3", "-w", "\n%{num_connects} %{http_version} %{ssl_verify_result}\n",
                "\(base)/v1/lists/demo?limit=3",
                "\(base)/v1/lists/demo?limit=3",
            ])
        #expect(pages.contains(#""list":"demo""#))
        #expect(pages.contains("\n1 1.1 0\n") && pages.contains("\n0 1.1 0\n"))
        // A session and its changes.
        let created = try Self.json(
            try Self.curl(
                certificates,
                [
                    "-X", "POST", "-H", "Content-Type: application/json", "-d", #"{"limit":2}"#,
                    "\(base)/v1/lists/demo/sessions",
                ]))
        let session = try #require(created["session"] as? String)
        let version = try #require(created["version"] as? Int)
        let changes = try Self.json(
            try Self.curl(certificates, ["\(base)/v1/sessions/\(session)/changes?since=\(version)"]))
        #expect(changes["version"] as? Int == version)
        // A long poll, woken by a write over HTTPS.
        let answer = Mutex<String?>(nil)
        let poller = DetachedThread.startJoinable {
            let text = try? Self.curl(certificates, ["\(base)/v1/sessions/\(session)/changes?since=\(version)&wait=15"])
            answer.withLock { $0 = text }
        }
        usleep(500_000)
        let write =
            #"{"ops":[{"op":"updateItems","items":[{"id":"m-1","type":"message","data":{"text":"over TLS"}}]}]}"#
        let clock = ContinuousClock()
        let written = clock.now
        _ = try Self.curl(
            certificates,
            ["-X", "POST", "-H", "Content-Type: application/json", "-d", write, "\(base)/v1/lists/demo/ops"])
        poller.join()
        #expect(clock.now - written < .seconds(5))
        let woken = try Self.json(try #require(answer.withLock { $0 }))
        #expect(woken["version"] as? Int == version + 1)
        // curl refuses without the CA; plain HTTP on the TLS port gets nothing.
        #expect(throws: HTTPClientError.self) {
            try TestCertificates.run("/usr/bin/curl", ["-sS", "--max-time", "5", "\(base)/healthz"])
        }
        #expect(throws: HTTPClientError.self) {
            try TestCertificates.run("/usr/bin/curl", ["-sS", "--max-time", "5", "http://127.0.0.1:\(port)/healthz"])
        }
        kill(child.pid, SIGTERM)
        #expect(child.waitForExit(seconds: 10) == 0)
    }

    @Test("rotation under load: 3 x (new files + SIGHUP), requests on fresh connections never fail")
    func rotationUnderLoad() throws {
        let certificates = try TestCertificates()
        let live = TLSConfiguration(
            certificateFile: certificates.path("live.pem"), keyFile: certificates.path("live.key"))
        let serials = ["0100", "0200", "0300", "0400"]
        let issued = try serials.map { try certificates.issue("s\($0)", serial: $0) }
        try TLSTestFiles.install(issued[0], as: live)
        let child = try Self.serve(live, environment: ["QUIRE_LOG_ACCESS": "false"])
        let port = try child.waitForPort()
        try child.waitUntilReady(port: port, tls: certificates.clientTLS)

        let stop = Atomic<Bool>(false)
        let requests = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        // Per client thread, the serials its connections presented, in order, without repeats: a connection
        // made after another on the same thread never presents an older certificate. (Across threads the
        // order of completion is not the order of the handshakes.)
        let seen = Mutex<[[String]]>(Array(repeating: [], count: 3))
        let clients = (0..<3).map { client in
            DetachedThread.startJoinable {
                while !stop.load(ordering: .relaxed) {
                    do {
                        let connection = try HTTPClientConnection(
                            host: "127.0.0.1", port: port, timeoutSeconds: 10, tls: certificates.clientTLS)
                        let status = try connection.request("GET", "/healthz").status
                        guard status == 200 else { throw HTTPClientError("status \(status)") }
                        requests.add(1, ordering: .relaxed)
                        let serial = connection.peerCertificateSerial ?? "?"
                        seen.withLock { if $0[client].last != serial { $0[client].append(serial) } }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        for (round, next) in issued.dropFirst().enumerated() {
            usleep(300_000)
            try TLSTestFiles.install(next, as: live)
            kill(child.pid, SIGHUP)
            try Self.waitForLog(child, "TLS certificate reloaded", count: round + 1)
            // Every handshake from now on presents the new certificate.
            let fresh = try HTTPClientConnection(host: "127.0.0.1", port: port, tls: certificates.clientTLS)
            #expect(fresh.peerCertificateSerial == serials[round + 1])
        }
        usleep(300_000)
        stop.store(true, ordering: .relaxed)
        clients.forEach { $0.join() }
        #expect(failures.withLock { $0 } == [])
        #expect(requests.load(ordering: .relaxed) > 50)
        for sequence in seen.withLock({ $0 }) {
            #expect(sequence == sequence.sorted(), "an older certificate after a newer one: \(sequence)")
            #expect(sequence.last == serials.last)
        }

        // A corrupt replacement: logged, and the certificate in use stays.
        try Data("-----BEGIN CERTIFICATE-----\ncorrupt\n".utf8).write(to: URL(fileURLWithPath: live.certificateFile))
        kill(child.pid, SIGHUP)
        try Self.waitForLog(child, "cannot reload the TLS certificate", count: 1)
        #expect(child.output.contains("no PEM certificate could be read"))
        let after = try HTTPClientConnection(host: "127.0.0.1", port: port, tls: certificates.clientTLS)
        #expect(after.peerCertificateSerial == "0400")
        #expect(try after.request("GET", "/healthz").status == 200)
        kill(child.pid, SIGTERM)
        #expect(child.waitForExit(seconds: 10) == 0)
    }

    @Test("unusable TLS settings stop start-up with exit 2 and a message naming the file and the reason")
    func badConfiguration() throws {
        let certificates = try TestCertificates()
        let good = try certificates.issue("good", serial: "61")
        let other = try certificates.issue("other", serial: "62")
        let garbage = certificates.path("garbage.pem")
        try "garbage\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        let cases: [(certificate: String, key: String, message: String)] = [
            ("/nonexistent/server.pem", good.keyFile, "TLS: /nonexistent/server.pem: No such file or directory"),
            (
                good.certificateFile, "/nonexistent/server.key",
                "TLS: /nonexistent/server.key: No such file or directory"
            ),
            (good.certificateFile, other.keyFile, "TLS: \(other.keyFile): this key does not match the certificate"),
            (garbage, good.keyFile, "TLS: \(garbage): no PEM certificate could be read"),
            (good.certificateFile, garbage, "TLS: \(garbage): no PEM private key could be read"),
            (good.certificateFile, "", "server.tls.certificateFile is set but server.tls.keyFile is not"),
        ]
        for (certificate, key, message) in cases {
            let child = try Self.serve(TLSConfiguration(certificateFile: certificate, keyFile: key))
            #expect(child.waitForExit(seconds: 10) == 2, "\(message)")
            #expect(child.output.contains(message), "\(child.output)")
        }
        let priorities = try Self.serve(good, environment: ["QUIRE_SERVER_TLS_PRIORITIES": "NORMAL:+BOGUS"])
        #expect(priorities.waitForExit(seconds: 10) == 2)
        #expect(priorities.output.contains("invalid TLS priority string"))
    }

    @Test("an expired certificate: a warning at start, and it serves")
    func expiredCertificate() throws {
        let certificates = try TestCertificates()
        let child = try Self.serve(try certificates.issue("old", serial: "71", days: -1))
        _ = try child.waitForPort()
        try Self.waitForLog(child, "expired", count: 1)
        #expect(child.output.contains(#""level":"warning""#))
        kill(child.pid, SIGTERM)
        #expect(child.waitForExit(seconds: 10) == 0)
    }

    @Test("quire health speaks HTTPS with a given CA")
    func health() throws {
        let certificates = try TestCertificates()
        let server = try Self.serve(try certificates.issue("server", serial: "81"))
        let port = try server.waitForPort()
        let url = "https://127.0.0.1:\(port)/healthz"
        let trusted = try QuireProcess(["health", "--url", url, "--cacert", certificates.authorityFile])
        #expect(trusted.waitForExit(seconds: 10) == 0)
        let untrusted = try QuireProcess(["health", "--url", url])
        #expect(untrusted.waitForExit(seconds: 10) == 1)
        #expect(untrusted.output.contains("TLS handshake"))
        kill(server.pid, SIGTERM)
        #expect(server.waitForExit(seconds: 10) == 0)
    }

    /// Waits until `text` appears on `count` lines of the child's log.
    static func waitForLog(_ child: QuireProcess, _ text: String, count: Int) throws {
        for _ in 0..<400 {
            if child.output.split(separator: "\n").filter({ $0.contains(text) }).count >= count { return }
            usleep(10_000)
        }
        throw HTTPClientError("no '\(text)' (\(count)x) in the log: \(child.output)")
    }
}

enum TLSTestFiles {
    /// Copies a certificate and key over the files a server is configured with, key first, each replaced
    /// atomically (as a renewal does; the server reads them on SIGHUP).
    static func install(_ source: TLSConfiguration, as target: TLSConfiguration) throws {
        for (from, to) in [(source.keyFile, target.keyFile), (source.certificateFile, target.certificateFile)] {
            let data = try Data(contentsOf: URL(fileURLWithPath: from))
            try data.write(to: URL(fileURLWithPath: to), options: .atomic)
        }
    }
}
