import Foundation
import QuireHTTP
import QuireTesting
import Testing

/// `quire serve` bound to a non-loopback address (`0.0.0.0`, reached over 127.0.0.1) keeps to the safe defaults of
/// docs/operations.md, "Public deployment": no demo, `/metrics` only with its token or on a listener of its own, and
/// a warning at start for every door left open; on loopback, what `make run` and the tests have always had.
@Suite("exposure: the defaults of a server open to the network", .serialized)
struct ExposureTests {
    static let writeToken = "exposure-write-token"

    /// `quire serve` on port 0 of `host` with a write token, its lists in memory, JSON logs; its port once ready.
    static func serve(host: String, environment: [String: String] = [:]) throws -> (QuireProcess, Int) {
        let child = try QuireProcess(
            ["serve", "--host", host, "--port", "0", "--log-format", "json", "--threads", "2"],
            environment: ["QUIRE_STORAGE_PATH": ":memory:", "QUIRE_AUTH_WRITE_TOKEN": writeToken].merging(
                environment
            ) { $1 })
        let port = try child.waitForPort()
        try child.waitUntilReady(port: port)
        return (child, port)
    }

    static func get(_ port: Int, _ path: String, token: String? = nil) throws -> ClientResponse {
        let headers = token.map { [("Authorization", "Bearer \($0)")] } ?? []
        return try HTTPClientConnection(host: "127.0.0.1", port: port).request("GET", path, headers: headers)
    }

    /// The messages of the process's warning lines.
    static func warnings(_ child: QuireProcess) -> [String] {
        child.output.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["level"] as? String == "warning"
            else { return nil }
            return object["message"] as? String
        }
    }

    /// The port of the metrics listener, from its "listening" line.
    static func metricsPort(_ child: QuireProcess) throws -> Int {
        for _ in 0..<200 {
            for line in child.output.split(separator: "\n") where line.contains("\"listening\"") {
                if let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    object["listener"] as? String == "metrics", let port = (object["port"] as? String).flatMap(Int.init)
                {
                    return port
                }
            }
            usleep(25_000)
        }
        throw HTTPClientError("no metrics listener: \(child.output)")
    }

    static func stop(_ child: QuireProcess) {
        kill(child.pid, SIGTERM)
        #expect(child.waitForExit(seconds: 15) == 0)
    }

    @Test("on 0.0.0.0: no demo list or page, /metrics refused without a token, a warning for each open door")
    func publicDefaults() throws {
        let (child, port) = try Self.serve(host: "0.0.0.0")
        defer { Self.stop(child) }
        #expect(try Self.get(port, "/v1/lists/demo").status == 404)
        let index = try JSONSerialization.jsonObject(with: Data(try Self.get(port, "/v1/lists").body)) as? [String: Any]
        #expect((index?["lists"] as? [Any])?.isEmpty == true)
        #expect(try Self.get(port, "/demo").status == 404)
        #expect(try Self.get(port, "/client/demo.js").status == 404)
        #expect(try Self.get(port, "/client/quire.js").status == 200, "quire.js is for apps, not the demo")
        for token in [nil, Self.writeToken] {
            let metrics = try Self.get(port, "/metrics", token: token)
            #expect(metrics.status == 401)
            #expect(metrics.headers["Content-Type"] == "application/problem+json")
            #expect(metrics.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
            let problem = try ProblemDocument(metrics.body)
            #expect(problem.type.hasSuffix("/unauthorized") && problem.detail.contains("auth.metricsToken"))
        }
        let warnings = Self.warnings(child)
        #expect(warnings.contains { $0.hasPrefix("serving plain HTTP on 0.0.0.0") }, "\(warnings)")
        #expect(warnings.contains { $0.hasPrefix("reads need no token on 0.0.0.0") }, "\(warnings)")
        #expect(!warnings.contains { $0.contains("demo") }, "\(warnings)")
        #expect(warnings.count == 2, "\(warnings)")
    }

    @Test("on 0.0.0.0 with a metrics token: /metrics answers with it and refuses without it or with another")
    func metricsToken() throws {
        let (child, port) = try Self.serve(host: "0.0.0.0", environment: ["QUIRE_AUTH_METRICS_TOKEN": "scrape-me"])
        defer { Self.stop(child) }
        #expect(try Self.get(port, "/metrics").status == 401)
        #expect(try Self.get(port, "/metrics", token: "scrape-m").status == 401)
        #expect(try Self.get(port, "/metrics", token: Self.writeToken).status == 401)
        let metrics = try Self.get(port, "/metrics", token: "scrape-me")
        #expect(metrics.status == 200)
        #expect(
            metrics.text.contains("quire_auth_denials_total{reason=\"invalid_token\"} 3"), "\(metrics.text.prefix(300))"
        )
        #expect(!child.output.contains("scrape-me"), "the token is never logged")
    }

    @Test("every door closed on 0.0.0.0 (read token, TLS offloaded): no warning")
    func doorsClosed() throws {
        let (child, port) = try Self.serve(
            host: "0.0.0.0",
            environment: ["QUIRE_AUTH_READ_TOKEN": "reader", "QUIRE_SERVER_TLS_OFFLOADED": "true"])
        defer { Self.stop(child) }
        #expect(try Self.get(port, "/v1/lists/demo", token: "reader").status == 404)
        #expect(Self.warnings(child).isEmpty, "\(Self.warnings(child))")
    }

    @Test("on 0.0.0.0 an explicit demo.seed: true wins: the demo list and page, and their warning")
    func explicitDemo() throws {
        let (child, port) = try Self.serve(
            host: "0.0.0.0", environment: ["QUIRE_DEMO_SEED": "true", "QUIRE_SERVER_TLS_OFFLOADED": "true"])
        defer { Self.stop(child) }
        #expect(try Self.get(port, "/v1/lists/demo").status == 200)
        #expect(try Self.get(port, "/demo").status == 200)
        let warnings = Self.warnings(child)
        #expect(warnings.contains { $0.hasPrefix("the demo list is seeded on 0.0.0.0") }, "\(warnings)")
        #expect(warnings.count == 2, "reads open and the demo: \(warnings)")
    }

    @Test("on loopback, today's behaviour: the demo list and page, /metrics open, no warning")
    func loopbackDefaults() throws {
        let (child, port) = try Self.serve(host: "127.0.0.1")
        defer { Self.stop(child) }
        #expect(try Self.get(port, "/v1/lists/demo").status == 200)
        #expect(try Self.get(port, "/demo").status == 200)
        #expect(try Self.get(port, "/metrics").status == 200)
        #expect(Self.warnings(child).isEmpty, "\(Self.warnings(child))")
    }

    @Test("on loopback an explicit demo.seed: false and a metrics token win")
    func loopbackExplicit() throws {
        let (child, port) = try Self.serve(
            host: "127.0.0.1", environment: ["QUIRE_DEMO_SEED": "false", "QUIRE_AUTH_METRICS_TOKEN": "scrape-me"])
        defer { Self.stop(child) }
        #expect(try Self.get(port, "/v1/lists/demo").status == 404)
        #expect(try Self.get(port, "/demo").status == 200, "the page stays on loopback")
        #expect(try Self.get(port, "/metrics").status == 401)
        #expect(try Self.get(port, "/metrics", token: "scrape-me").status == 200)
    }

    @Test("the metrics listener serves /metrics, /healthz and /readyz only; the service's own port refuses /metrics")
    func metricsListener() throws {
        let (child, port) = try Self.serve(
            host: "0.0.0.0",
            environment: [
                "QUIRE_SERVER_METRICS_LISTENER_ENABLED": "true", "QUIRE_SERVER_METRICS_LISTENER_HOST": "127.0.0.1",
                "QUIRE_SERVER_METRICS_LISTENER_PORT": "0",
            ])
        defer { Self.stop(child) }
        let metricsPort = try Self.metricsPort(child)
        #expect(metricsPort != port)
        let metrics = try Self.get(metricsPort, "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("# TYPE quire_http_requests_total counter"), "\(metrics.text.prefix(300))")
        #expect(try Self.get(metricsPort, "/healthz").status == 200)
        #expect(try Self.get(metricsPort, "/readyz").status == 200)
        for path in ["/v1/lists", "/openapi.yaml", "/client/quire.js"] {
            #expect(try Self.get(metricsPort, path).status == 404, "\(path)")
        }
        #expect(try Self.get(port, "/metrics").status == 401)
        let warnings = Self.warnings(child)
        #expect(!warnings.contains { $0.contains("metrics listener") }, "a loopback listener is no door: \(warnings)")
    }

    @Test("a metrics listener open to the network warns; with a metrics token it needs the token too")
    func metricsListenerDoors() throws {
        let listener = [
            "QUIRE_SERVER_METRICS_LISTENER_ENABLED": "true", "QUIRE_SERVER_METRICS_LISTENER_PORT": "0",
        ]
        do {
            let (child, _) = try Self.serve(host: "0.0.0.0", environment: listener)
            defer { Self.stop(child) }
            let metricsPort = try Self.metricsPort(child)
            #expect(try Self.get(metricsPort, "/metrics").status == 200)
            let warnings = Self.warnings(child)
            #expect(
                warnings.contains { $0.hasPrefix("GET /metrics needs no token on the metrics listener, 0.0.0.0:") },
                "\(warnings)")
        }
        let (child, _) = try Self.serve(
            host: "0.0.0.0", environment: listener.merging(["QUIRE_AUTH_METRICS_TOKEN": "scrape-me"]) { $1 })
        defer { Self.stop(child) }
        let metricsPort = try Self.metricsPort(child)
        #expect(try Self.get(metricsPort, "/metrics").status == 401)
        #expect(try Self.get(metricsPort, "/metrics", token: "scrape-me").status == 200)
        #expect(!Self.warnings(child).contains { $0.contains("metrics listener") })
    }

    @Test("demo.seed and server.cors.allowedOrigins refuse what they cannot use: exit 2 naming the key")
    func invalidSettings() throws {
        for (key, value) in [
            ("QUIRE_DEMO_SEED", "sometimes"), ("QUIRE_SERVER_CORS_ALLOWED_ORIGINS", "app.example.com"),
            ("QUIRE_SERVER_CORS_ALLOWED_ORIGINS", "https://app.example.com/path"),
            ("QUIRE_SERVER_CORS_ALLOWED_ORIGINS", "*,https://app.example.com"),
        ] {
            let child = try QuireProcess(
                ["serve", "--port", "0"], environment: ["QUIRE_STORAGE_PATH": ":memory:", key: value])
            #expect(child.waitForExit(seconds: 10) == 2, "\(key)=\(value)")
            let name = key == "QUIRE_DEMO_SEED" ? "demo.seed" : "server.cors.allowedOrigins"
            #expect(child.output.contains(name), "\(key)=\(value): \(child.output)")
        }
    }
}
