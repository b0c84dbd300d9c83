import Dispatch
import Foundation
import QuireCore
import QuireHTTP
import QuireStore
import QuireTesting
import Synchronization
import Testing

/// `quire serve` and `quire backup` with a storage file, as an operator runs them.
@Suite("serve and back up with a storage file", .serialized)
struct ServeStorageTests {
    static let json = [("Content-Type", "application/json")]

    static func list(_ tag: Int) -> [UInt8] {
        let items = (0..<50).map { #"{"id":"i\#($0)","type":"t","data":{"tag":\#(tag)}}"# }
        return Array(#"{"sections":[{"id":"s","items":[\#(items.joined(separator: ","))]}]}"#.utf8)
    }

    @Test("lists and versions survive a graceful restart; a missing folder is created")
    func restart() throws {
        let folder = TemporaryFolder()
        let path = folder.path("deep/er/quire.sqlite")
        do {
            let server = try QuireProcess.serve(storage: path)
            let port = try server.waitForPort()
            try server.waitUntilReady(port: port)
            let connection = try HTTPClientConnection(host: "127.0.0.1", port: port)
            #expect(
                try connection.request("PUT", "/v1/lists/kept", headers: Self.json, body: Self.list(1)).status == 201)
            #expect(
                try connection.request("PUT", "/v1/lists/kept", headers: Self.json, body: Self.list(2)).status == 200)
            kill(server.pid, SIGTERM)
            #expect(server.waitForExit() == 0)
        }
        let server = try QuireProcess.serve(storage: path)
        let port = try server.waitForPort()
        try server.waitUntilReady(port: port)
        let connection = try HTTPClientConnection(host: "127.0.0.1", port: port)
        #expect(try connection.request("GET", "/v1/lists").text.contains(#"{"list":"kept","version":2"#))
        #expect(try connection.request("GET", "/v1/lists/kept?limit=1").text.contains(#""tag":2"#))
        let third = try connection.request("PUT", "/v1/lists/kept", headers: Self.json, body: Self.list(3))
        #expect(third.text.contains(#""version":3"#))
        kill(server.pid, SIGTERM)
        #expect(server.waitForExit() == 0)
    }

    @Test("a corrupt storage file stops start-up: exit 1, a message naming it, the file untouched")
    func corruptFile() throws {
        let folder = TemporaryFolder()
        let path = folder.path("quire.sqlite")
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let garbage = Data(repeating: 0x5A, count: 10_000)
        try garbage.write(to: URL(fileURLWithPath: path))
        let server = try QuireProcess.serve(storage: path)
        #expect(server.waitForExit() == 1)
        #expect(server.output.contains("cannot open the database"))
        #expect(server.output.contains("file is not a database"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test("quire backup while the server writes: the copy is consistent and serves the same lists")
    func backupWhileWriting() throws {
        let folder = TemporaryFolder()
        let path = folder.path("live.sqlite")
        let copyPath = folder.path("backup/copy.sqlite")
        let server = try QuireProcess.serve(storage: path)
        let port = try server.waitForPort()
        try server.waitUntilReady(port: port)
        let setup = try HTTPClientConnection(host: "127.0.0.1", port: port)
        for name in ["a", "b"] {
            #expect(try setup.request("PUT", "/v1/lists/\(name)", headers: Self.json, body: Self.list(0)).status == 201)
        }
        // Keep writing list "a" while the backup runs.
        let stop = Atomic(false)
        let acknowledged = Atomic(1)
        let writer = DispatchGroup()
        DispatchQueue.global().async(group: writer) {
            guard let connection = try? HTTPClientConnection(host: "127.0.0.1", port: port) else { return }
            var tag = 1
            while !stop.load(ordering: .relaxed) {
                guard
                    let response = try? connection.request(
                        "PUT", "/v1/lists/a", headers: Self.json, body: Self.list(tag)),
                    response.status == 200
                else { return }
                acknowledged.store(tag + 1, ordering: .relaxed)
                tag += 1
            }
        }
        // The backup starts once the writer is writing (a loaded machine may start it late).
        let deadline = Date().addingTimeInterval(20)
        while acknowledged.load(ordering: .relaxed) < 3 && Date() < deadline { usleep(5_000) }
        let backup = try QuireProcess(["backup", "--storage", path, "--to", copyPath])
        #expect(backup.waitForExit() == 0)
        stop.store(true, ordering: .relaxed)
        writer.wait()
        #expect(acknowledged.load(ordering: .relaxed) >= 3)
        kill(server.pid, SIGTERM)
        #expect(server.waitForExit() == 0)

        // The copy: a whole version of each list, at most the last acknowledged one.
        let copied = try SQLiteListStore(path: copyPath).loadAll(limits: ListLimits())
        #expect(copied.keys.sorted() == ["a", "b"])
        let versionA = try #require(copied["a"]?.version)
        #expect(versionA >= 1 && versionA <= UInt64(acknowledged.load(ordering: .relaxed)))
        let expected = try ListVersion(document: JSONParser().parse(Self.list(Int(versionA) - 1)))
        #expect(copied["a"]?.documentBytes == expected.documentBytes)

        // And a server started on the copy serves those lists.
        let restored = try QuireProcess.serve(storage: copyPath)
        let restoredPort = try restored.waitForPort()
        try restored.waitUntilReady(port: restoredPort)
        let listing = try HTTPClientConnection(host: "127.0.0.1", port: restoredPort).request("GET", "/v1/lists").text
        #expect(listing.contains(#"{"list":"a","version":\#(versionA)"#))
        #expect(listing.contains(#"{"list":"b","version":1"#))
        kill(restored.pid, SIGTERM)
        #expect(restored.waitForExit() == 0)

        // A second backup onto the same file is refused.
        let again = try QuireProcess(["backup", "--storage", path, "--to", copyPath])
        #expect(again.waitForExit() == 1)
        #expect(again.output.contains("exists"))
    }
}
