import Foundation
import QuireCore
import QuireStore
import QuireTesting
import Testing

/// A folder of its own for one test, removed at the end.
final class TemporaryFolder {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("quire-store-\(UUID())")

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Writes written as JSON text, applied to a version.
func applying(_ version: ListVersion, _ ops: String) throws -> ListVersion {
    try version.applying(opsDocument: JSONParser().parse("{\"ops\":[\(ops)]}"))
}

func document(_ text: String) throws -> JSONValue { try JSONParser().parse(text) }

/// A list of `count` items in one section `all`, ids `i0`…
func bigList(_ count: Int, sections: Int = 1) throws -> ListVersion {
    var text = #"{"sections":["#
    let perSection = count / sections
    for section in 0..<sections {
        if section > 0 { text += "," }
        text += #"{"id":"s\#(section)","items":["#
        for index in 0..<perSection {
            if index > 0 { text += "," }
            let id = section * perSection + index
            text += #"{"id":"i\#(id)","type":"cell","data":{"n":\#(id),"text":"item \#(id)"}}"#
        }
        text += "]}"
    }
    text += "]}"
    return try ListVersion(document: document(text))
}

@Suite("SQLite store")
struct StoreTests {
    static let sample = #"""
        {"sections":[
          {"id":"today","header":{"type":"day","data":{"title":"Today"}},"footer":null,"items":[
            {"id":"m-1","type":"message","data":{"from":"Ada","text":"Hi \"there\""}},
            {"id":"t-9","type":"thread","data":{"title":"Trip"},"children":[
              {"id":"m-7","type":"message","data":{"text":"Tickets?"},"children":[{"id":"m-8","type":"x"}]}]}]},
          {"id":"empty","header":null,"footer":{"type":"more","data":[1,2.5,true,null]},"items":[]}]}
        """#

    @Test("a list written, changed by ops and replaced comes back exactly, with its version, after reopening")
    func roundTrip() throws {
        let folder = TemporaryFolder()
        let path = folder.path("nested/folder/quire.sqlite")
        var versions: [ListVersion] = []
        do {
            let store = try SQLiteListStore(path: path)
            var current = try ListVersion(document: document(Self.sample))
            try store.commit(list: "inbox", previous: nil, next: current)
            versions.append(current)
            let writes = [
                #"{"op":"insertItems","section":"today","items":[{"id":"n-1","type":"m"},{"id":"n-2","type":"m"}],"after":"m-1"}"#,
                #"{"op":"moveItem","id":"m-7","section":"empty"}"#,
                #"{"op":"insertItems","parent":"m-7","items":[{"id":"c-1","type":"m","children":[{"id":"c-2","type":"m"}]}],"before":"m-8"}"#,
                #"{"op":"removeItems","ids":["t-9"]}"#,
                #"{"op":"updateItems","items":[{"id":"m-1","type":"message","data":"changed"}]}"#,
                #"{"op":"insertSections","sections":[{"id":"first","items":[{"id":"f-1","type":"m"}]}],"before":"today"}"#,
                #"{"op":"moveSection","id":"empty","after":"first"}"#,
                #"{"op":"updateSection","id":"today","header":null,"footer":{"type":"f","data":1}}"#,
                #"{"op":"moveItem","id":"n-2","before":"n-1"}"#,
                #"{"op":"removeSections","ids":["first"]}"#,
            ]
            for ops in writes {
                let next = try applying(current, ops)
                try store.commit(list: "inbox", previous: current, next: next)
                current = next
                versions.append(current)
            }
            let replaced = try current.replacing(with: document(Self.sample))
            try store.commit(list: "inbox", previous: current, next: replaced)
            versions.append(replaced)
            try store.commit(list: "other", previous: nil, next: try bigList(10, sections: 2))
        }
        let reopened = try SQLiteListStore(path: path)
        #expect(try reopened.journalMode() == "wal")
        #expect(try reopened.synchronousMode() == 2)
        #expect(try reopened.checkpointThreshold() == 10_000)
        let lists = try reopened.loadAll(limits: ListLimits())
        #expect(lists.keys.sorted() == ["inbox", "other"])
        #expect(lists["inbox"]?.documentBytes == versions.last!.documentBytes)
        #expect(lists["inbox"]?.version == 12)
        #expect(lists["other"]?.documentBytes == (try bigList(10, sections: 2)).documentBytes)
    }

    @Test("versions keep counting across a restart, through the registry")
    func versionsContinue() throws {
        let folder = TemporaryFolder()
        let path = folder.path("quire.sqlite")
        do {
            let registry = ListRegistry(store: try SQLiteListStore(path: path), limits: ListLimits())
            for _ in 0..<3 {
                _ = try registry.write("a") { previous throws(ListRegistry.WriteError) in
                    do {
                        return try previous?.replacing(with: document(Self.sample))
                            ?? ListVersion(document: document(Self.sample))
                    } catch { throw .invalidList(error as! ListValidationError) }
                }
            }
        }
        let registry = ListRegistry(store: try SQLiteListStore(path: path), limits: ListLimits())
        #expect(registry.version(of: "a") == nil, "nothing is loaded at start")
        #expect(try registry.loadedVersion(of: "a")?.version == 3)
        let commit = try registry.write("a") { previous throws(ListRegistry.WriteError) in
            do { return try applying(previous!, #"{"op":"removeItems","ids":["m-1"]}"#) } catch {
                throw .invalidOp(error as! OpError)
            }
        }
        #expect(commit.version.version == 4)
        try registry.delete("a")
        #expect(try SQLiteListStore(path: path).loadAll(limits: ListLimits()).isEmpty)
        // Created again after a restart: its versions go on from the deleted list's 4, kept in the file.
        let reopened = ListRegistry(store: try SQLiteListStore(path: path), limits: ListLimits())
        #expect(try reopened.loadedVersion(of: "a") == nil)
        let created = try reopened.write("a") { _ throws(ListRegistry.WriteError) in
            do { return try ListVersion(document: document(Self.sample)) } catch {
                throw .invalidList(error as! ListValidationError)
            }
        }
        #expect(created.version.version == 5)
        #expect(try SQLiteListStore(path: path).retiredVersion(of: "a") == 0)
        let restarted = ListRegistry(store: try SQLiteListStore(path: path), limits: ListLimits())
        #expect(try restarted.loadedVersion(of: "a")?.version == 5)
    }

    @Test("a list's handle moves on with every version, is retired when the list is deleted or leaves memory")
    func listHandles() throws {
        // A budget of one byte: a list leaves memory as soon as nothing pins it.
        let registry = ListRegistry(
            store: try SQLiteListStore(path: ":memory:"), limits: ListLimits(), memoryBudget: 1)
        registry.pins.add("a")
        registry.pins.add("b")
        func write(_ name: String) throws {
            _ = try registry.write(name) { previous throws(ListRegistry.WriteError) in
                do {
                    return try previous?.replacing(with: document(Self.sample))
                        ?? ListVersion(document: document(Self.sample))
                } catch { throw .invalidList(error as! ListValidationError) }
            }
        }
        #expect(registry.handledVersion(of: "a") == nil)
        try write("a")
        try write("b")
        let (first, handle, generation) = try #require(registry.handledVersion(of: "a"))
        #expect(first.version == 1)
        #expect(handle.currentGeneration == generation)
        #expect(try #require(registry.handledVersion(of: "b")).generation != generation, "numbered process-wide")
        try write("a")
        let (second, same, next) = try #require(registry.handledVersion(of: "a"))
        #expect(second.version == 2)
        #expect(same === handle)
        #expect(next != generation)
        #expect(handle.currentGeneration == next)
        try registry.delete("a")
        #expect(handle.currentGeneration == 0, "retired with its list")
        try write("a")
        let (_, recreated, _) = try #require(registry.handledVersion(of: "a"))
        #expect(recreated !== handle)
        #expect(handle.currentGeneration == 0, "never current again")
        // Out of memory (the budget is a byte) once unpinned: retired; loaded again, the list has a new handle.
        let b = try #require(registry.handledVersion(of: "b"))
        registry.pins.remove("b")
        registry.enforceBudget()
        #expect(registry.version(of: "b") == nil)
        #expect(registry.contains("a"), "pinned")
        #expect(b.handle.currentGeneration == 0)
        registry.pins.add("b")
        #expect(try registry.loadedVersion(of: "b")?.version == 1)
        #expect(try #require(registry.handledVersion(of: "b")).handle !== b.handle)
    }

    @Test("one item written into a 100,000-item list writes a few rows, not the list")
    func smallWrite() throws {
        let store = try SQLiteListStore(path: SQLiteListStore.inMemoryPath)
        let big = try bigList(100_000)
        try store.commit(list: "big", previous: nil, next: big)
        let before = try store.totalChanges()
        let next = try applying(
            big, #"{"op":"insertItems","section":"s0","items":[{"id":"x","type":"t"}],"after":"i5"}"#)
        try store.commit(list: "big", previous: big, next: next)
        // One item row, and the list's version.
        #expect(try store.totalChanges() - before == 2)
        #expect(try store.rowCounts(of: "big").items == 100_001)
        #expect(try store.loadAll(limits: ListLimits())["big"]?.documentBytes == next.documentBytes)
    }

    @Test(":memory: keeps lists for the life of the store")
    func inMemory() throws {
        let store = try SQLiteListStore(path: ":memory:")
        let list = try ListVersion(document: document(Self.sample))
        try store.commit(list: "a", previous: nil, next: list)
        #expect(try store.loadAll(limits: ListLimits())["a"]?.documentBytes == list.documentBytes)
    }

    @Test("a file that is not a database is refused with a clear error and left untouched")
    func corruptFile() throws {
        let folder = TemporaryFolder()
        let path = folder.path("quire.sqlite")
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try SQLiteListStore(path: path)
        } throws: { error in
            "\(error)".contains("cannot open the database \(path)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test("a damaged database is refused at load, and left untouched")
    func damagedDatabase() throws {
        let folder = TemporaryFolder()
        let path = folder.path("quire.sqlite")
        do {
            let store = try SQLiteListStore(path: path)
            try store.commit(list: "big", previous: nil, next: try bigList(20_000))
        }
        // Overwrite pages in the middle of the file with zeros and noise.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        handle.write(Data((0..<16_384).map { UInt8(truncatingIfNeeded: $0 &* 13) }))
        try handle.close()
        let damaged = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: StoreError.self) {
            let store = try SQLiteListStore(path: path)
            _ = try store.loadAll(limits: ListLimits())
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged)
    }

    @Test("a path that cannot be opened is an error naming it")
    func unopenable() throws {
        let folder = TemporaryFolder()
        let path = folder.path("a-folder")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #expect {
            _ = try SQLiteListStore(path: path)
        } throws: { error in
            "\(error)".contains(path)
        }
    }

    @Test("a backup while the store is open opens with the same lists")
    func backup() throws {
        let folder = TemporaryFolder()
        let path = folder.path("quire.sqlite")
        let store = try SQLiteListStore(path: path)
        let list = try ListVersion(document: document(Self.sample))
        try store.commit(list: "a", previous: nil, next: list)
        try SQLiteListStore.backup(from: path, to: folder.path("copy/backup.sqlite"))
        #expect(throws: StoreError.self) {
            try SQLiteListStore.backup(from: path, to: folder.path("copy/backup.sqlite"))
        }
        let copy = try SQLiteListStore(path: folder.path("copy/backup.sqlite"))
        #expect(try copy.loadAll(limits: ListLimits())["a"]?.documentBytes == list.documentBytes)
    }
}

extension StoreTests {
    @Test("writes of 16 lists at once share transactions (group commit); a lone write commits alone, at once")
    func groupCommit() throws {
        let folder = TemporaryFolder()
        let store = try SQLiteListStore(path: folder.path("group.sqlite"))
        let registry = ListRegistry(store: store, limits: ListLimits())
        let empty = try JSONParser().parse(#"{"sections":[{"id":"s","items":[]}]}"#)
        _ = try registry.write("alone") { _ throws(ListRegistry.WriteError) in .replace(empty) }
        #expect(store.groupCommitCounts == (1, 1))
        try concurrently(16) { writer in
            for index in 0..<50 {
                let op = try JSONParser().parse(
                    #"{"ops":[{"op":"insertItems","section":"s","items":[{"id":"i\#(index)","type":"t"}]}]}"#)
                _ = try registry.write("l\(writer)") { previous throws(ListRegistry.WriteError) in
                    previous == nil ? .replace(empty) : .ops(op)
                }
            }
        }
        let (commits, writes) = store.groupCommitCounts
        #expect(writes == 1 + 16 * 50)
        #expect(commits < writes, "concurrent writers shared syncs: \(commits) transactions for \(writes) writes")
        let stored = try SQLiteListStore(path: folder.path("group.sqlite")).loadAll(limits: ListLimits())
        #expect(stored.count == 17)
        #expect(stored["l3"]?.version == 50)
    }
}
