import QuireCore
import QuireStore
import Testing

/// The journal of writes of a SQLite file: small writes are acknowledged once their journal rows are synced, and
/// reach the tables later. What is read, listed or opened again is always the lists as acknowledged.
@Suite("journal of writes")
struct JournalTests {
    static let empty = #"{"sections":[{"id":"s","items":[]}]}"#

    static func insert(_ id: String) throws -> ListWrite {
        .ops(try document(#"{"ops":[{"op":"insertItems","section":"s","items":[{"id":"\#(id)","type":"t"}]}]}"#))
    }

    static func create(_ registry: ListRegistry, _ name: String) throws {
        _ = try registry.write(name) { _ throws(ListRegistry.WriteError) in .replace(try! document(Self.empty)) }
    }

    static func write(_ registry: ListRegistry, _ name: String, _ id: String) throws {
        let op = try insert(id)
        _ = try registry.write(name, mustExist: true) { _ throws(ListRegistry.WriteError) in op }
    }

    /// The lists as a file opened anew holds them, each as its document's bytes and version.
    static func reopened(_ path: String) throws -> [String: (version: UInt64, document: [UInt8])] {
        let store = try SQLiteListStore(path: path)
        defer { try? store.close() }
        #expect(store.journaledWrites == 0, "an opening applies the journal")
        return try store.loadAll(limits: ListLimits()).mapValues { ($0.version, $0.documentBytes) }
    }

    static func expectSame(
        _ registry: ListRegistry, _ stored: [String: (version: UInt64, document: [UInt8])],
        _ names: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(Set(stored.keys) == Set(names), sourceLocation: sourceLocation)
        for name in names {
            let held = registry.version(of: name)
            #expect(stored[name]?.version == held?.version, "\(name)", sourceLocation: sourceLocation)
            #expect(stored[name]?.document == held?.documentBytes, "\(name)", sourceLocation: sourceLocation)
        }
    }

    @Test("small writes are held in the journal; an opening applies them, and the first process goes on writing")
    func journaledThenOpened() throws {
        let folder = TemporaryFolder()
        let path = folder.path("journal.sqlite")
        let store = try SQLiteListStore(path: path)
        let registry = ListRegistry(store: store, limits: ListLimits())
        for name in ["a", "b"] { try Self.create(registry, name) }
        for index in 0..<10 { try Self.write(registry, index % 2 == 0 ? "a" : "b", "i\(index)") }
        #expect(store.journaledWrites == 12)
        #expect(try store.rowCounts(of: "a").items == 5, "reading a list's rows applies its entries")
        #expect(store.journaledWrites == 6)
        Self.expectSame(registry, try Self.reopened(path), ["a", "b"])

        // The entries this store holds were applied by the other opening: applying them again changes nothing.
        for index in 10..<14 { try Self.write(registry, "b", "i\(index)") }
        let loaded = try store.loadAll(limits: ListLimits())
        #expect(store.journaledWrites == 0)
        #expect(loaded["b"]?.documentBytes == registry.version(of: "b")?.documentBytes)
        #expect(loaded["b"]?.itemCount == 9)
        Self.expectSame(registry, try Self.reopened(path), ["a", "b"])
    }

    @Test("past the journal's limit, the oldest lists' entries are applied after a commit, and the rest stay held")
    func limit() throws {
        let folder = TemporaryFolder()
        let path = folder.path("limit.sqlite")
        let store = try SQLiteListStore(path: path, journalLimit: 1_000)
        let registry = ListRegistry(store: store, limits: ListLimits())
        let names = (0..<64).map { "l\($0)" }
        for name in names { try Self.create(registry, name) }
        var written = 0
        while written < 5_000 {
            let batch = try (0..<300).map { index in
                ListRegistry.QueuedWrite(
                    names[(written + index) % names.count], mustExist: true,
                    write: try Self.insert("i\(written + index)"))
            }
            for outcome in registry.write(together: batch) { _ = try outcome.get() }
            written += batch.count
            #expect(store.journaledWrites < 1_000, "a batch that crosses the limit applies chunks until below it")
        }
        #expect(store.journaledWrites > 500)
        Self.expectSame(registry, try Self.reopened(path), names)
    }

    @Test("with no journal (a limit of 0), every write's rows are written at once")
    func noJournal() throws {
        let folder = TemporaryFolder()
        let path = folder.path("none.sqlite")
        let store = try SQLiteListStore(path: path, journalLimit: 0)
        let registry = ListRegistry(store: store, limits: ListLimits())
        try Self.create(registry, "l")
        for index in 0..<5 { try Self.write(registry, "l", "i\(index)") }
        #expect(store.journaledWrites == 0)
        Self.expectSame(registry, try Self.reopened(path), ["l"])
    }

    @Test("a listing shows journaled versions and lists the tables lack yet, in name order, within its limit")
    func listing() throws {
        let folder = TemporaryFolder()
        let store = try SQLiteListStore(path: folder.path("listing.sqlite"))
        let empty = try ListVersion(document: document(Self.empty))
        try store.create([("a", empty), ("c", empty), ("e", empty)])
        let registry = ListRegistry(store: store, limits: ListLimits())
        for name in ["b", "d"] { try Self.create(registry, name) }
        try Self.write(registry, "c", "x")
        let held = store.journaledWrites
        #expect(held == 3)

        let first = try #require(try store.summaries(of: .all, after: nil, limit: 3))
        #expect(first.map(\.name) == ["a", "b", "c"])
        #expect(first[2].version == registry.version(of: "c")?.version)
        #expect(first[2].items == 1)
        let rest = try #require(try store.summaries(of: .all, after: "c", limit: 10))
        #expect(rest.map(\.name) == ["d", "e"])
        let one = try #require(
            try store.summaries(of: ListSelection(prefixes: [], names: ["d"]), after: nil, limit: 10))
        #expect(one.map(\.name) == ["d"])
        #expect(store.journaledWrites == held, "a listing writes nothing")
    }

    @Test("a list deleted with journaled writes stays deleted when opened again; created again, it goes on numbering")
    func deleted() throws {
        let folder = TemporaryFolder()
        let path = folder.path("deleted.sqlite")
        let store = try SQLiteListStore(path: path)
        let registry = ListRegistry(store: store, limits: ListLimits())
        try Self.create(registry, "gone")
        try Self.create(registry, "kept")
        for index in 0..<3 { try Self.write(registry, "gone", "i\(index)") }
        let last = try #require(registry.version(of: "gone")?.version)
        try registry.delete("gone")
        #expect(try SQLiteListStore(path: path).loadAll(limits: ListLimits()).keys.sorted() == ["kept"])

        try Self.create(registry, "gone")
        #expect(registry.version(of: "gone")?.version == last + 1)
        try Self.write(registry, "gone", "new")
        Self.expectSame(registry, try Self.reopened(path), ["gone", "kept"])
    }

    @Test("a large write is written at once, after the journaled writes of its list before it in the same batch")
    func largeWrite() throws {
        let folder = TemporaryFolder()
        let path = folder.path("large.sqlite")
        let store = try SQLiteListStore(path: path)
        let registry = ListRegistry(store: store, limits: ListLimits())
        try Self.create(registry, "l")
        let many = (0..<200).map { #"{"id":"m\#($0)","type":"t"}"# }.joined(separator: ",")
        let large = ListWrite.ops(
            try document(#"{"ops":[{"op":"insertItems","section":"s","items":[\#(many)]}]}"#))
        let outcomes = registry.write(together: [
            .init("l", mustExist: true, write: try Self.insert("before")),
            .init("l", mustExist: true, write: large),
            .init("l", mustExist: true, write: try Self.insert("after")),
        ])
        for outcome in outcomes { _ = try outcome.get() }
        #expect(
            store.journaledWrites == 1, "the list's creation and the write before are applied with the large write")
        #expect(registry.version(of: "l")?.itemCount == 202)
        Self.expectSame(registry, try Self.reopened(path), ["l"])
    }

    @Test("lists created together replace a list with journaled writes, even at a lower version")
    func createdOver() throws {
        let folder = TemporaryFolder()
        let path = folder.path("created.sqlite")
        let store = try SQLiteListStore(path: path)
        let registry = ListRegistry(store: store, limits: ListLimits())
        try Self.create(registry, "l")
        for index in 0..<5 { try Self.write(registry, "l", "i\(index)") }
        let imported = try ListVersion(
            document: document(#"{"sections":[{"id":"s","items":[{"id":"imported","type":"t"}]}]}"#))
        try store.create([("l", imported)])
        #expect(store.journaledWrites == 0)
        let stored = try Self.reopened(path)
        #expect(stored["l"]?.version == imported.version)
        #expect(stored["l"]?.document == imported.documentBytes)
    }
}
