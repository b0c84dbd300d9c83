import Foundation
import QuireHTTP
import QuireTesting
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
}
