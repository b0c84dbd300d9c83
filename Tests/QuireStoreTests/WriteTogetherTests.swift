import QuireCore
import QuireStore
import Testing

/// The registry's batches (`ListRegistry.write(together:)`) on a SQLite file: what the store's one writer makes of
/// the writes queued while it committed the batch before.
@Suite("writes made together on a SQLite file")
struct WriteTogetherTests {
    static let empty = #"{"sections":[{"id":"s","items":[]}]}"#

    static func insert(_ id: String, text: String = "") throws -> ListWrite {
        .ops(
            try document(
                #"{"ops":[{"op":"insertItems","section":"s","items":[{"id":"\#(id)","type":"t","data":"\#(text)"}]}]}"#)
        )
    }

    /// The current version a `412` names, `nil` for any other outcome.
    static func mismatch(_ outcome: Result<ListRegistry.Commit, ListRegistry.WriteError>) -> UInt64? {
        guard case .failure(.versionMismatch(let current)) = outcome else { return nil }
        return current
    }

    @Test("one transaction; a list's writes build on each other; a refused write refuses only itself")
    func batch() throws {
        let folder = TemporaryFolder()
        let path = folder.path("together.sqlite")
        let store = try SQLiteListStore(path: path)
        let registry = ListRegistry(store: store, limits: ListLimits())
        let created = try registry.write("a") { _ throws(ListRegistry.WriteError) in .replace(try! document(Self.empty))
        }
        let first = created.version.version
        let before = store.groupCommitCounts

        let outcomes = registry.write(together: [
            .init("a", mustExist: true, write: try Self.insert("i1")),
            // Checked against the write before it in the batch, not against the version held before the batch.
            .init("a", ifMatch: [first + 1], mustExist: true, write: try Self.insert("i2")),
            .init("a", ifMatch: [first], mustExist: true, write: try Self.insert("i3")),
            .init("a", mustExist: true, write: try Self.insert("i1")),
            .init("missing", mustExist: true, write: try Self.insert("x")),
            .init("b", write: .replace(try document(Self.empty))),
        ])

        #expect(try outcomes[0].get().version.version == first + 1)
        #expect(try outcomes[1].get().version.version == first + 2)
        #expect(Self.mismatch(outcomes[2]) == first + 2)
        guard case .failure(.invalidOp) = outcomes[3] else {
            Issue.record("a duplicate item is refused by itself, got \(outcomes[3])")
            return
        }
        guard case .failure(.listNotFound) = outcomes[4] else {
            Issue.record("ops on a list that does not exist are refused by themselves, got \(outcomes[4])")
            return
        }
        #expect(try outcomes[5].get().created)
        #expect(store.groupCommitCounts == (before.commits + 1, before.writes + 3), "one transaction of three commits")

        // Published, and stored as published.
        let a = try #require(registry.version(of: "a"))
        #expect(a.version == first + 2)
        #expect(a.itemCount == 2)
        let stored = try SQLiteListStore(path: path).loadAll(limits: ListLimits())
        #expect(stored["a"]?.documentBytes == a.documentBytes)
        #expect(stored["a"]?.version == a.version)
        #expect(stored["b"]?.documentBytes == registry.version(of: "b")?.documentBytes)
        #expect(stored["missing"] == nil)
    }

    @Test("a transaction that fails fails every write in it, refused ones keep their reason, and nothing changes")
    func failedBatch() throws {
        let folder = TemporaryFolder()
        let path = folder.path("together.sqlite")
        let store = try SQLiteListStore(path: path)
        let registry = ListRegistry(store: store, limits: ListLimits())
        for name in ["a", "b"] {
            _ = try registry.write(name) { _ throws(ListRegistry.WriteError) in .replace(try! document(Self.empty)) }
        }
        let a = try #require(registry.version(of: "a"))
        let b = try #require(registry.version(of: "b"))

        // The file may not grow: a batch of large items cannot be stored.
        try store.setMaximumPageCount(try store.pageCount())
        let large = String(repeating: "x", count: 20_000)
        let outcomes = registry.write(together: [
            .init("a", mustExist: true, write: try Self.insert("i1", text: large)),
            // Refused on the version the first write built, which is not stored: this refusal does not stand.
            .init("a", ifMatch: [a.version], mustExist: true, write: try Self.insert("i2")),
            // Refused on the version held before the batch: it stands.
            .init("b", ifMatch: [b.version + 7], mustExist: true, write: try Self.insert("i2")),
            .init("b", mustExist: true, write: try Self.insert("i1", text: large)),
            .init("c", write: .replace(try document(Self.empty))),
        ])
        for index in [0, 1, 3, 4] {
            guard case .failure(.storage) = outcomes[index] else {
                Issue.record("write \(index) fails with the store's error, got \(outcomes[index])")
                continue
            }
        }
        #expect(Self.mismatch(outcomes[2]) == b.version)
        #expect(registry.version(of: "a")?.version == a.version)
        #expect(registry.version(of: "b")?.version == b.version)
        #expect(registry.version(of: "c") == nil)
        let stored = try SQLiteListStore(path: path).loadAll(limits: ListLimits())
        #expect(stored["a"]?.documentBytes == a.documentBytes)
        #expect(stored["b"]?.documentBytes == b.documentBytes)
        #expect(stored["c"] == nil)

        // Room again: the same batch is made, and the list created is known to the store (no row id left over).
        try store.setMaximumPageCount(1_000_000)
        let again = registry.write(together: [
            .init("c", write: .replace(try document(Self.empty))),
            .init("c", mustExist: true, write: try Self.insert("i1")),
        ])
        #expect(try again[1].get().version.itemCount == 1)
        #expect(try SQLiteListStore(path: path).loadAll(limits: ListLimits())["c"]?.itemCount == 1)
    }

    @Test("a write prepared on a version that another write replaced meanwhile is made again on the current one")
    func prepared() throws {
        let folder = TemporaryFolder()
        let path = folder.path("together.sqlite")
        let store = try SQLiteListStore(path: path)
        let registry = ListRegistry(store: store, limits: ListLimits())
        _ = try registry.write("a") { _ throws(ListRegistry.WriteError) in .replace(try! document(Self.empty)) }

        var stale = ListRegistry.QueuedWrite("a", mustExist: true, write: try Self.insert("late"))
        registry.prepare(&stale)
        var refused = ListRegistry.QueuedWrite("a", mustExist: true, write: try Self.insert("first"))
        registry.prepare(&refused)
        let first = try Self.insert("first")
        _ = try registry.write("a") { _ throws(ListRegistry.WriteError) in first }
        var current = ListRegistry.QueuedWrite("a", mustExist: true, write: try Self.insert("next"))
        registry.prepare(&current)

        let outcomes = registry.write(together: [current, stale, refused])
        // Prepared on the version the batch starts from: made as prepared.
        #expect(try outcomes[0].get().version.itemCount == 2)
        // Prepared on a version without "first": made again on the batch's, which has "first" and "next".
        #expect(try outcomes[1].get().version.itemCount == 3)
        // Prepared as valid, refused on the version it meets ("first" is there now).
        guard case .failure(.invalidOp) = outcomes[2] else {
            Issue.record("the duplicate is refused on the version it meets, got \(outcomes[2])")
            return
        }
        let stored = try SQLiteListStore(path: path).loadAll(limits: ListLimits())["a"]
        #expect(stored?.documentBytes == registry.version(of: "a")?.documentBytes)
        #expect(stored?.itemCount == 3)
    }
}
