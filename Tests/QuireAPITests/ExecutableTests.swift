import Foundation
import QuireHTTP
import QuireTesting
import Testing

/// The `quire` binary itself, as an operator runs it: a child process on port 0.
@Suite("quire executable", .serialized)
struct ExecutableTests {
    /// The `quire` binary built next to the test bundle.
    static var binary: String {
        get throws {
            let directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            let candidates = [
                Bundle.main.executableURL?.deletingLastPathComponent(), directory.deletingLastPathComponent(),
                URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent(),
            ]
            for case let folder? in candidates {
                let path = folder.appendingPathComponent("quire").path
                if FileManager.default.isExecutableFile(atPath: path) { return path }
            }
            throw HTTPClientError("the quire binary is not built next to the tests: run `swift build` first")
        }
    }

    /// A running `quire serve` child process whose standard error goes to a file.
    final class Child {
        let process = Process()
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("quire-\(UUID()).log")

        init(_ arguments: [String], environment: [String: String] = [:]) throws {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            process.executableURL = URL(fileURLWithPath: try ExecutableTests.binary)
            process.arguments = arguments
            // Children of this suite keep their lists in memory, never in the repository's data/.
            process.environment = ["QUIRE_STORAGE_PATH": ":memory:"].merging(environment) { $1 }
            let handle = try FileHandle(forWritingTo: log)
            process.standardError = handle
            process.standardOutput = handle
            try process.run()
        }

        var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        /// The port from the JSON "listening" log line, once it appears.
        func waitForPort() throws -> Int {
            for _ in 0..<200 {
                for line in output.split(separator: "\n") where line.contains("\"listening\"") {
                    if let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                        let port = (object["port"] as? String).flatMap(Int.init)
                    {
                        return port
                    }
                }
                if !process.isRunning { break }
                usleep(50_000)
            }
            throw HTTPClientError("quire did not start: \(output)")
        }

        func waitForExit(seconds: Double = 10) -> Int32? {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                process.terminate()
                return nil
            }
            return process.terminationStatus
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try? FileManager.default.removeItem(at: log)
        }
    }

    @Test("serve on port 0, answer /healthz, exit 0 on SIGTERM and on SIGINT", arguments: [SIGTERM, SIGINT])
    func serveAndStop(signal: Int32) throws {
        let child = try Child(["serve", "--port", "0", "--log-format", "json"])
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
        kill(child.process.processIdentifier, signal)
        #expect(child.waitForExit() == 0)
        #expect(child.output.contains("\"stopped\""))
    }

    @Test("environment variables configure the server")
    func environment() throws {
        let child = try Child(
            ["serve", "--log-format", "json"], environment: ["QUIRE_SERVER_PORT": "0", "QUIRE_LOG_LEVEL": "debug"])
        let port = try child.waitForPort()
        #expect(try HTTPClientConnection(host: "127.0.0.1", port: port).request("GET", "/healthz").status == 200)
        kill(child.process.processIdentifier, SIGTERM)
        #expect(child.waitForExit() == 0)
    }

    @Test("refuses a non-loopback address without a write token: exit 2 and a clear message")
    func refusesOpenNonLoopback() throws {
        let child = try Child(["serve", "--host", "0.0.0.0", "--port", "0"])
        #expect(child.waitForExit() == 2)
        #expect(child.output.contains("without a write token"))
    }

    @Test("an invalid setting stops start-up with exit 2")
    func invalidSetting() throws {
        let child = try Child(["serve", "--port", "0"], environment: ["QUIRE_LOG_FORMAT": "xml"])
        #expect(child.waitForExit() == 2)
        #expect(child.output.contains("log.format"))
    }

    @Test("quire health exits 0 while /healthz answers 200, 1 otherwise")
    func health() throws {
        let server = try Child(["serve", "--port", "0", "--log-format", "json"])
        let port = try server.waitForPort()
        let healthy = try Child(["health", "--url", "http://127.0.0.1:\(port)/healthz"])
        #expect(healthy.waitForExit() == 0)
        let wrongPath = try Child(["health", "--url", "http://127.0.0.1:\(port)/nope"])
        #expect(wrongPath.waitForExit() == 1)
        kill(server.process.processIdentifier, SIGTERM)
        #expect(server.waitForExit() == 0)
        let down = try Child(["health", "--url", "http://127.0.0.1:\(port)/healthz", "--timeout", "1"])
        #expect(down.waitForExit() == 1)
    }
}
