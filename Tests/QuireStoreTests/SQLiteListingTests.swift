import Foundation
import GRDB
import QuireCore
import QuireHTTP
import QuireStore
import QuireTesting
import Testing

@Suite("GET /v1/lists on a SQLite file", .serialized)
struct SQLiteListingTests {
    /// The lists of ``listingFamilies``, as versions.
    static func families() throws -> [(name: String, version: ListVersion)] {
        try listingFamilies.flatMap { family in
            try (0..<family.count).map { index in
                (name: "\(family.prefix)\(index)", version: try ListVersion(document: document(listingDocument(index))))
            }
        }
    }

    @Test("pages through 10,000 stored lists that are not in memory, by prefix and scopes: each once, in order")
    func paging() async throws {
        let folder = TemporaryFolder()
        let store = try SQLiteListStore(path: folder.path("quire.sqlite"))
        let service = try await ListingService(store: store)
        defer { service.stop() }
        // Written into the file behind the running service's back (one transaction): listed from the file.
        try store.create(try Self.families())
        try await service.checkPagingThroughTheFamilies()
    }

    @Test("the listed sizes and versions follow writes and deletes")
    func sizes() async throws {
        let folder = TemporaryFolder()
        let service = try await ListingService(store: try SQLiteListStore(path: folder.path("quire.sqlite")))
        defer { service.stop() }
        try service.checkSizesFollowWrites()
    }

    /// The schema of the release before list sizes (migrations v1 and v2), as it wrote it.
    static let previousSchema = """
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        INSERT INTO grdb_migrations VALUES ('v1: lists, sections, items'), ('v2: versions of deleted lists');
        CREATE TABLE list (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            version INTEGER NOT NULL
        );
        CREATE TABLE section (
            list INTEGER NOT NULL,
            id TEXT NOT NULL,
            position BLOB NOT NULL,
            header BLOB,
            footer BLOB,
            PRIMARY KEY (list, id)
        ) WITHOUT ROWID;
        CREATE TABLE item (
            list INTEGER NOT NULL,
            nested INTEGER NOT NULL,
            parent TEXT NOT NULL,
            position BLOB NOT NULL,
            id TEXT NOT NULL,
            body BLOB NOT NULL,
            PRIMARY KEY (list, nested, parent, position)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX item_by_id ON item (list, id);
        CREATE TABLE retired (
            name TEXT PRIMARY KEY,
            version INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    /// Writes a file of ``previousSchema`` at `path`: `old-tree` at version 7, with sections `a` (items 1, with
    /// children 1a and 1b, and 2) and `b` (a header, no item); `Old-empty` at version 1, with no section; `gone`
    /// deleted at version 4.
    static func writePreviousFile(at path: String) async throws {
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        let file = try DatabaseQueue(path: path)
        try await file.write { db in
            try db.execute(sql: Self.previousSchema)
            try db.execute(
                sql: """
                    INSERT INTO list (id, name, version) VALUES (1, 'old-tree', 7), (2, 'Old-empty', 1);
                    INSERT INTO section VALUES
                        (1, 'a', x'00000001', NULL, NULL),
                        (1, 'b', x'00000002', CAST('{"type":"h","data":null}' AS BLOB), NULL);
                    INSERT INTO item VALUES
                        (1, 0, 'a', x'00000001', '1', CAST('{"id":"1","type":"t","data":null}' AS BLOB)),
                        (1, 0, 'a', x'00000002', '2', CAST('{"id":"2","type":"t","data":{"n":2}}' AS BLOB)),
                        (1, 1, '1', x'00000001', '1a', CAST('{"id":"1a","type":"t","data":null}' AS BLOB)),
                        (1, 1, '1', x'00000002', '1b', CAST('{"id":"1b","type":"t","data":null}' AS BLOB));
                    INSERT INTO retired VALUES ('gone', 4);
                    """)
        }
        try file.close()
    }

    @Test(
        "a file of the previous schema opens, gains the sizes of its lists and its items keyed by id, and lists and serves them as before"
    )
    func previousSchema() async throws {
        let folder = TemporaryFolder()
        let path = folder.path("previous.sqlite")
        try await Self.writePreviousFile(at: path)
        let store = try SQLiteListStore(path: path)
        let expected = [
            ListSummary(name: "Old-empty", version: 1, sections: 0, items: 0),
            ListSummary(name: "old-tree", version: 7, sections: 2, items: 4),
        ]
        #expect(try store.summaries(of: .all, after: nil, limit: 10) == expected)
        #expect(try store.retiredVersion(of: "gone") == 4)
        let loaded = try store.loadAll(limits: ListLimits())
        #expect(loaded["old-tree"]?.version == 7 && loaded["old-tree"]?.itemCount == 4)
        // Items are keyed by their id now, with no other index, the old table's pages are given back, and the
        // items still load in their order.
        let schema = try await DatabaseQueue(path: path).read { db in
            (
                try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('item') WHERE pk > 0 ORDER BY pk"),
                try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'item'"),
                try Int.fetchOne(db, sql: "PRAGMA freelist_count")
            )
        }
        #expect(schema.0 == ["list", "id"] && schema.1.isEmpty && schema.2 == 0)
        let document = String(decoding: loaded["old-tree"]?.documentBytes ?? [], as: UTF8.self)
        let order = ["\"1\"", "\"1a\"", "\"1b\"", "\"2\""].map { document.range(of: "\"id\":\($0)")?.lowerBound }
        #expect(order.allSatisfy { $0 != nil } && order.map { $0! } == order.map { $0! }.sorted())

        let service = try await ListingService(store: store)
        defer { service.stop() }
        #expect(try service.walk() == expected)
        let page = try service.server.request("GET", "/v1/lists/old-tree?limit=5", headers: ListingService.writer)
        #expect(page.status == 200 && page.text.contains(#"{"id":"2","type":"t","data":{"n":2}}"#))
        let insert = try service.server.request(
            "POST", "/v1/lists/old-tree/ops", headers: ListingService.writer + [("Content-Type", "application/json")],
            body: Array(#"{"ops":[{"op":"insertItems","section":"b","items":[{"id":"3","type":"t"}]}]}"#.utf8))
        #expect(insert.status == 200)
        #expect(try service.walk().last == ListSummary(name: "old-tree", version: 8, sections: 2, items: 5))
    }

    @Test("a backup of a file of the previous schema copies it as it is, leaves it untouched, and the copy serves")
    func backupOfPreviousSchema() async throws {
        let folder = TemporaryFolder()
        let path = folder.path("previous.sqlite")
        try await Self.writePreviousFile(at: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let copyPath = folder.path("copy/previous.sqlite")
        try SQLiteListStore.backup(from: path, to: copyPath)
        // A backup never upgrades its source: a server of the release that wrote it may be serving it.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let migrations = try await DatabaseQueue(path: copyPath).read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
        }
        #expect(migrations == ["v1: lists, sections, items", "v2: versions of deleted lists"])
        // The copy is upgraded when a store opens it, and holds the same lists.
        let copy = try SQLiteListStore(path: copyPath)
        let loaded = try copy.loadAll(limits: ListLimits())
        #expect(loaded["old-tree"]?.version == 7 && loaded["old-tree"]?.itemCount == 4)
        #expect(try copy.retiredVersion(of: "gone") == 4)
    }

    @Test("a backup of a SQLite file that is not Quire's is refused, and neither file is written")
    func backupOfAnotherDatabase() async throws {
        let folder = TemporaryFolder()
        let path = folder.path("other.sqlite")
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        do {
            let file = try DatabaseQueue(path: path)
            try await file.write { db in try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
            try file.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let copyPath = folder.path("copy.sqlite")
        #expect {
            try SQLiteListStore.backup(from: path, to: copyPath)
        } throws: { error in
            "\(error)".contains("not a Quire database") && "\(error)".contains(path)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: copyPath))
    }
}
