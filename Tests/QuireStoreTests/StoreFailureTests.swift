import Foundation
import Logging
import QuireAPI
import QuireCore
import QuireHTTP
import QuireStore
import QuireTesting
import Testing

/// What a write does when the store cannot take it: a problem document, the previous version kept, the
/// process running, and the next write stored once the cause is gone.
@Suite("store failures", .serialized)
struct StoreFailureTests {
    /// A small tmpfs mounted for one test, when the machine allows it (root in a container that may
    /// mount); `nil` otherwise.
    final class SmallFileSystem {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quire-tmpfs-\(UUID())")

        init?(kilobytes: Int) {
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let mount = Process()
            mount.executableURL = URL(fileURLWithPath: "/bin/mount")
            mount.arguments = ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", folder.path]
            mount.standardError = FileHandle.nullDevice
            guard (try? mount.run()) != nil else { return nil }
            mount.waitUntilExit()
            guard mount.terminationStatus == 0 else {
                try? FileManager.default.removeItem(at: folder)
                return nil
            }
        }

        /// Fills the file system up with a file, until the kernel refuses more.
        func fill() -> String {
            let path = folder.appendingPathComponent("filler").path
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            let chunk = [UInt8](repeating: 0xAB, count: 4096)
            while write(descriptor, chunk, chunk.count) > 0 {}
            close(descriptor)
            return path
        }

        deinit {
            let unmount = Process()
            unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
            unmount.arguments = [folder.path]
            if (try? unmount.run()) != nil { unmount.waitUntilExit() }
            try? FileManager.default.removeItem(at: folder)
        }
    }

    static let json = [("Content-Type", "application/json")]

    /// A list document of `count` items of about 1 KB each.
    static func listBody(_ count: Int, tag: String) -> [UInt8] {
        let text = String(repeating: "x", count: 1000)
        let items = (0..<count).map { #"{"id":"i\#($0)","type":"t","data":{"tag":"\#(tag)","text":"\#(text)"}}"# }
        return Array(#"{"sections":[{"id":"s","items":[\#(items.joined(separator: ","))]}]}"#.utf8)
    }

    static func service(store: SQLiteListStore) throws -> (QuireService, TestServer) {
        var configuration = QuireService.Configuration()
        configuration.http.host = "127.0.0.1"
        configuration.http.port = 0
        configuration.http.threads = 2
        configuration.demo.seed = false
        let service = QuireService(configuration: configuration, logger: TestServer.logger, store: store)
        try service.startAndLoad()
        return (service, try TestServer(running: service.server))
    }

    /// The failing write's answer, then the list as it stands, then a write once the cause is gone.
    static func checkFailedWrite(
        server: TestServer, store: SQLiteListStore, storePath: String, removeCause: () throws -> Void
    ) throws {
        let failed = try server.request("PUT", "/v1/lists/l", headers: json, body: listBody(400, tag: "too-much"))
        #expect(failed.status == 503 || failed.status == 500)
        #expect(failed.headers["Content-Type"]?.hasPrefix("application/problem+json") == true)
        let after = try server.request("GET", "/v1/lists")
        #expect(after.text.contains(#""version":1"#))
        let page = try server.request("GET", "/v1/lists/l?limit=1")
        #expect(page.status == 200)
        #expect(page.text.contains(#""tag":"first""#))
        try removeCause()
        let retried = try server.request("PUT", "/v1/lists/l", headers: json, body: listBody(400, tag: "second"))
        #expect(retried.status == 200)
        #expect(retried.text.contains(#""version":2"#))
        let reopened = try SQLiteListStore(path: storePath)
        let reloaded = try reopened.loadAll(limits: ListLimits())
        try reopened.close()
        #expect(reloaded["l"]?.version == 2)
        #expect(String(decoding: reloaded["l"]!.documentBytes, as: UTF8.self).contains(#""tag":"second""#))
    }

    @Test("a full disk: 503 problem, the previous version stays, the next write succeeds once there is room")
    func fullDisk() throws {
        guard let fileSystem = SmallFileSystem(kilobytes: 4096) else {
            // No mount here: the size cap below fails writes the same way (SQLITE_FULL).
            return
        }
        try withExtendedLifetime(fileSystem) {
            let path = fileSystem.folder.appendingPathComponent("quire.sqlite").path
            let store = try SQLiteListStore(path: path)
            let (service, server) = try Self.service(store: store)
            defer {
                // Close the file before the file system is unmounted.
                service.shutdown()
                try? store.close()
            }
            let first = try server.request(
                "PUT", "/v1/lists/l", headers: Self.json, body: Self.listBody(5, tag: "first"))
            #expect(first.status == 201)
            let filler = fileSystem.fill()
            try Self.checkFailedWrite(server: server, store: store, storePath: path) {
                try FileManager.default.removeItem(atPath: filler)
            }
        }
    }

    @Test("a file that may not grow (a quota): 503 problem, previous version kept, next write succeeds")
    func sizeCap() throws {
        let folder = TemporaryFolder()
        let path = folder.path("quire.sqlite")
        let store = try SQLiteListStore(path: path)
        let (service, server) = try Self.service(store: store)
        defer { service.shutdown() }
        #expect(
            try server.request("PUT", "/v1/lists/l", headers: Self.json, body: Self.listBody(5, tag: "first")).status
                == 201)
        try store.setMaximumPageCount(try store.pageCount())
        try Self.checkFailedWrite(server: server, store: store, storePath: path) {
            try store.setMaximumPageCount(1_000_000)
        }
    }

    @Test("through the registry: the error is a storage error and nothing changes")
    func registry() throws {
        let store = try SQLiteListStore(path: ":memory:")
        let registry = ListRegistry(store: store, limits: ListLimits())
        let first = try registry.write("l") { _ throws(ListRegistry.WriteError) in
            do {
                return try ListVersion(document: document(String(decoding: Self.listBody(3, tag: "a"), as: UTF8.self)))
            } catch { throw .invalidList(error as! ListValidationError) }
        }
        try store.setMaximumPageCount(try store.pageCount())
        #expect {
            _ = try registry.write("l") { previous throws(ListRegistry.WriteError) in
                do {
                    return try previous!.replacing(
                        with: document(String(decoding: Self.listBody(300, tag: "b"), as: UTF8.self)))
                } catch { throw .invalidList(error as! ListValidationError) }
            }
        } throws: { error in
            guard case ListRegistry.WriteError.storage(let reason) = error else { return false }
            return reason.contains("cannot store the write")
        }
        #expect(registry.version(of: "l")?.version == first.version.version)
        #expect(try store.loadAll(limits: ListLimits())["l"]?.documentBytes == first.version.documentBytes)
    }
}
