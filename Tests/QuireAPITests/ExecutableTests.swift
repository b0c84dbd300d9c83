import Foundation
import QuireHTTP
import QuireTesting
import QuireVersion
import Testing

/// The `quire` binary itself, as an operator runs it: a child process on port 0.
@Suite("quire executable", .serialized)
struct ExecutableTests {
    /// A `quire` child process whose lists stay in memory, never in the repository's data/.
    static func child(_ arguments: [String], environment: [String: String] = [:]) throws -> QuireProcess {
        try QuireProcess(arguments, environment: ["QUIRE_STORAGE_PATH": ":memory:"].merging(environment) { $1 })
    }

    @Test("serve on port 0, answer /healthz, exit 0 on SIGTERM and on SIGINT", arguments: [SIGTERM, SIGINT])
    func serveAndStop(signal: Int32) throws {
        let child = try Self.child(["serve", "--port", "0", "--log-format", "json"])
        let port = try child.waitForPort()
        let connection = try HTTPClientConnection(host: "127.0.0.1", port: port)
        #expect(try connection.request("GET", "/healthz").text == #"{"status":"ok"}"#)
        // Listening comes first; ready once the lists are loaded.
        var ready = try connection.request("GET", "/readyz").status
        for _ in 0..<200 where ready != 200 {
            #expect(ready == 503)
            usleep(20_000)
            ready = try connection.request("GET", "/readyz").status
        }
        #expect(ready == 200)
        kill(child.pid, signal)
        #expect(child.waitForExit(seconds: 10) == 0)
        #expect(child.output.contains("\"stopped\""))
    }

    @Test("quire --version prints the release, CHANGELOG.md's newest, and exits 0")
    func version() throws {
        let child = try Self.child(["--version"])
        #expect(child.waitForExit(seconds: 10) == 0)
        #expect(child.output == "\(Release.version)\n")
        #expect(try ReleaseTests.releases().versions.first == Release.version)
    }

    @Test("environment variables configure the server")
    func environment() throws {
        let child = try Self.child(
            ["serve", "--log-format", "json"], environment: ["QUIRE_SERVER_PORT": "0", "QUIRE_LOG_LEVEL": "debug"])
        let port = try child.waitForPort()
        #expect(try HTTPClientConnection(host: "127.0.0.1", port: port).request("GET", "/healthz").status == 200)
        kill(child.pid, SIGTERM)
        #expect(child.waitForExit(seconds: 10) == 0)
    }

    @Test("refuses a non-loopback address without a write token: exit 2 and a clear message")
    func refusesOpenNonLoopback() throws {
        let child = try Self.child(["serve", "--host", "0.0.0.0", "--port", "0"])
        #expect(child.waitForExit(seconds: 10) == 2)
        #expect(child.output.contains("without a write token"))
    }

    @Test("an invalid setting stops start-up with exit 2")
    func invalidSetting() throws {
        let child = try Self.child(["serve", "--port", "0"], environment: ["QUIRE_LOG_FORMAT": "xml"])
        #expect(child.waitForExit(seconds: 10) == 2)
        #expect(child.output.contains("log.format"))
    }

    @Test("a source that cannot be read stops start-up with exit 2, naming the source and the key")
    func invalidSource() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("quire-\(UUID()).yaml").path
        try """
        sources:
          - name: inbox
            url: postgres://quire:hunter2@127.0.0.1:5432/app
            table: public.messages
            list: "inbox-{owner}"
            section: folder
            order: ["sent_at sideways"]
            type: message
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let child = try Self.child(["serve", "--port", "0", "--config", path])
        #expect(child.waitForExit(seconds: 10) == 2)
        #expect(child.output.contains(#"sources[inbox].order: "sent_at sideways" is not "column [asc|desc]""#))
        #expect(!child.output.contains("hunter2"))
    }

    @Test("quire health exits 0 while /healthz answers 200, 1 otherwise")
    func health() throws {
        let server = try Self.child(["serve", "--port", "0", "--log-format", "json"])
        let port = try server.waitForPort()
        let healthy = try Self.child(["health", "--url", "http://127.0.0.1:\(port)/healthz"])
        #expect(healthy.waitForExit(seconds: 10) == 0)
        let wrongPath = try Self.child(["health", "--url", "http://127.0.0.1:\(port)/nope"])
        #expect(wrongPath.waitForExit(seconds: 10) == 1)
        kill(server.pid, SIGTERM)
        #expect(server.waitForExit(seconds: 10) == 0)
        let down = try Self.child(["health", "--url", "http://127.0.0.1:\(port)/healthz", "--timeout", "1"])
        #expect(down.waitForExit(seconds: 10) == 1)
    }

    @Test("quire config prints the merged settings as YAML, secrets as <redacted>; --defaults the embedded ones")
    func config() throws {
        let child = try Self.child(
            ["config", "--port", "9000", "--write-token", "flag-secret"], environment: ["QUIRE_LOG_LEVEL": "debug"])
        #expect(child.waitForExit(seconds: 10) == 0)
        for line in ["server:", "  port: 9000", "  level: debug", #"  path: ":memory:""#, "  writeToken: <redacted>"] {
            #expect(child.output.contains("\n\(line)\n"), "\(line)")
        }
        #expect(!child.output.contains("flag-secret"))
        let defaults = try Self.child(["config", "--defaults"], environment: ["QUIRE_SERVER_PORT": "9001"])
        #expect(defaults.waitForExit(seconds: 10) == 0)
        #expect(
            defaults.output.contains("\n  port: 8080\n") && defaults.output.contains("\n  path: data/quire.sqlite\n"))
        let refused = try Self.child(["config", "--defaults", "--port", "1"])
        #expect(refused.waitForExit(seconds: 10) != 0)
    }
}

/// The access log of `quire serve`: buffered, yet every line of a run is written, including the lines of
/// the requests answered just before SIGTERM.
@Suite("quire executable: access log", .serialized)
struct AccessLogExecutableTests {
    @Test("every request of a run that ends with SIGTERM has its line, once")
    func everyLineAtShutdown() throws {
        let child = try ExecutableTests.child(["serve", "--port", "0", "--log-format", "json"])
        let port = try child.waitForPort()
        try child.waitUntilReady(port: port)
        let count = 3_000
        let connections = try (0..<4).map { _ in try HTTPClientConnection(host: "127.0.0.1", port: port) }
        for index in 0..<count {
            let response = try connections[index % 4].request(
                "GET", index % 3 == 0 ? "/healthz" : "/v1/lists/demo?limit=2",
                headers: [("X-Request-Id", "run-\(index)")])
            #expect(response.status == 200)
        }
        kill(child.pid, SIGTERM)  // at once: most lines are still in the buffer
        #expect(child.waitForExit(seconds: 20) == 0)
        var seen = Set<String>()
        for line in child.output.split(separator: "\n") where line.contains(#""log":"access""#) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
            if let id = object["request_id"], id.hasPrefix("run-") {
                #expect(seen.insert(id).inserted, "line of \(id) written twice")
                #expect(object["status"] == "200")
            }
        }
        #expect(seen.count == count)
    }

    @Test("a line is written within about a second, with no shutdown")
    func flushedWithinASecond() throws {
        let child = try ExecutableTests.child(["serve", "--port", "0", "--log-format", "json"])
        let port = try child.waitForPort()
        _ = try HTTPClientConnection(host: "127.0.0.1", port: port).request(
            "GET", "/healthz", headers: [("X-Request-Id", "lonely-request")])
        let deadline = ContinuousClock.now + .seconds(10)
        while !child.output.contains(#""request_id":"lonely-request""#) && ContinuousClock.now < deadline {
            usleep(50_000)
        }
        #expect(child.output.contains(#""request_id":"lonely-request","route":"/healthz","status":"200""#))
        kill(child.pid, SIGTERM)
        #expect(child.waitForExit(seconds: 10) == 0)
    }
}
