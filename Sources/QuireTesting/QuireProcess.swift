public import Foundation
public import QuireHTTP

/// A `quire` child process (the binary built next to the tests), its output in a file: for the tests
/// of the executable itself, the crash test and the backup test.
public final class QuireProcess {
    public let process = Process()
    public let log = FileManager.default.temporaryDirectory.appendingPathComponent("quire-store-\(UUID()).log")

    /// The `quire` binary built next to the test bundle.
    public static var binary: String {
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

    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: try Self.binary)
        process.arguments = arguments
        process.environment = environment
        let handle = try FileHandle(forWritingTo: log)
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
    }

    /// `quire serve` on port 0 with its lists in `storage`, JSON logs, no demo list.
    ///
    /// `journalWrites`: the store's `storage.journalWrites`, when not the default.
    public static func serve(storage: String, journalWrites: Int? = nil) throws -> QuireProcess {
        var environment = ["QUIRE_DEMO_SEED": "false"]
        environment["QUIRE_STORAGE_JOURNAL_WRITES"] = journalWrites.map(String.init)
        return try QuireProcess(
            ["serve", "--port", "0", "--storage", storage, "--log-format", "json", "--threads", "2"],
            environment: environment)
    }

    public var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    public var pid: Int32 { process.processIdentifier }

    /// The port from the JSON "listening" log line, once it appears.
    public func waitForPort() throws -> Int {
        for _ in 0..<400 {
            for line in output.split(separator: "\n") where line.contains("\"listening\"") {
                if let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let port = (object["port"] as? String).flatMap(Int.init)
                {
                    return port
                }
            }
            if !process.isRunning { break }
            usleep(25_000)
        }
        throw HTTPClientError("quire did not start: \(output)")
    }

    /// Waits until `/readyz` answers 200 (every list loaded); over HTTPS with `tls`.
    public func waitUntilReady(port: Int, tls: ClientTLS? = nil) throws {
        for _ in 0..<400 {
            if let status = try? HTTPClientConnection(host: "127.0.0.1", port: port, tls: tls).request("GET", "/readyz")
                .status,
                status == 200
            {
                return
            }
            usleep(25_000)
        }
        throw HTTPClientError("quire did not turn ready: \(output)")
    }

    /// The exit status, or `nil` when the process did not exit in time (it is killed then).
    public func waitForExit(seconds: Double = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: log)
    }
}
