import Foundation
import QuireCore
import QuireHTTP
import QuireSources
import QuireStore
import QuireTesting
import Testing

@testable import QuireAPI

/// What a followed table may do besides rows changing: every type of §2b's value mapping and `NULL`s, through the
/// copy and through the log alike; a row whose list name is invalid; `TRUNCATE` inside a transaction; a column added
/// and one the source names dropped.
@Suite(
    "sources: values, schema changes and failures",
    .enabled(if: sourceServerURL != nil, "needs QUIRE_TEST_POSTGRES_URL (make test starts one)"))
struct SourceEdgeTests {
    static let valueColumns = [
        "i2", "i4", "i8", "r", "d", "num", "b", "j", "jb", "arr", "tarr", "ts", "t", "dt", "u", "tx",
    ]

    static func source(_ database: SourceDatabase, table: String, data: [String]) -> SourceConfiguration {
        SourceConfiguration(
            name: database.sourceName, url: database.url, table: TableName(name: table),
            list: ListTemplate(prefix: "e-", column: "owner"), section: "folder",
            order: [OrderTerm(column: "id")], type: .constant("row"), data: data)
    }

    static func file() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("edge-\(UUID()).db").path
    }

    /// The list's items by id, once `done` holds of them (or after 20 s).
    static func items(
        _ list: String, _ fixture: APIFixture, until done: ([String: [String: Any]]) -> Bool
    ) throws -> [String: [String: Any]] {
        let deadline = Date().addingTimeInterval(20)
        var items: [String: [String: Any]] = [:]
        repeat {
            items = [:]
            for section in try fixture.page(list)["sections"] as? [[String: Any]] ?? [] {
                for item in section["items"] as? [[String: Any]] ?? [] { items[item["id"] as! String] = item }
            }
            if done(items) { break }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return items
    }

    @Test("every type of the value mapping and NULLs, the same through the copy and through the log")
    func values() throws {
        let database = try SourceDatabase()
        defer { database.drop() }
        let sql = try PostgresConnection(url: database.url)
        let values =
            "7, 70000, 9000000000, 1.5, 2.25, 12345678901234567890.123456789, true, '{\"a\": [1, null]}', "
            + "'{\"b\": {\"c\": \"d\"}}', '{1,2,3}', '{\"x\",NULL}', '2026-12-01 10:00:00+00', '2026-12-01 10:00:00', "
            + "'2026-12-01', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'text'"
        try sql.execute(
            """
            SET TIME ZONE 'UTC';
            CREATE TABLE vals (id integer PRIMARY KEY, owner text, folder text, i2 smallint, i4 integer, i8 bigint,
                r real, d double precision, num numeric, b boolean, j json, jb jsonb, arr integer[], tarr text[],
                ts timestamptz, t timestamp, dt date, u uuid, tx text);
            INSERT INTO vals VALUES (1, 'v', 'f', \(values)), (2, 'v', 'f', \(Self.nulls));
            """)
        let file = Self.file()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fixture = try SourceFollowingTests.start(
            Self.source(database, table: "vals", data: Self.valueColumns), file: file)
        defer { fixture.stop() }
        try sql.execute("INSERT INTO vals VALUES (3, 'v', 'f', \(values)), (4, 'v', 'f', \(Self.nulls))")
        let items = try Self.items("e-v", fixture) { $0.count == 4 }
        try #require(items.count == 4, "\(items.keys)")

        let expected: [String: Any] = [
            "i2": 7, "i4": 70000, "i8": 9_000_000_000, "r": 1.5, "d": 2.25, "b": true, "j": ["a": [1, NSNull()]],
            "jb": ["b": ["c": "d"]], "arr": [1, 2, 3], "tarr": ["x", NSNull()], "ts": "2026-12-01 10:00:00+00",
            "t": "2026-12-01 10:00:00", "dt": "2026-12-01", "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "tx": "text",
        ]
        for id in ["1", "3"] {
            let data = try #require(items[id]?["data"] as? [String: Any])
            for (column, value) in expected {
                #expect(
                    try Self.json(data[column] ?? "missing") == Self.json(value),
                    "row \(id), \(column): \(data[column] ?? "missing") for \(value)")
            }
            #expect(Set(data.keys) == Set(Self.valueColumns), "row \(id)")
        }
        for id in ["2", "4"] {
            let data = try #require(items[id]?["data"] as? [String: Any])
            #expect(Self.valueColumns.allSatisfy { data[$0] is NSNull }, "row \(id): \(data)")
        }
        // numeric exactly as PostgreSQL prints it, not through a double.
        let text = try fixture.call("GET", "/v1/lists/e-v").text
        #expect(text.components(separatedBy: "\"num\":12345678901234567890.123456789").count == 3, "\(text)")
    }

    /// A value as JSON text, members sorted: two values are the same JSON when their texts are.
    static func json(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys]), as: UTF8.self)
    }

    static let nulls = Array(repeating: "NULL", count: 16).joined(separator: ", ")

    @Test("an invalid list name is skipped and counted; TRUNCATE then inserts in one transaction; columns change")
    func skippedTruncatedAndSchema() throws {
        let database = try SourceDatabase()
        defer { database.drop() }
        let sql = try PostgresConnection(url: database.url)
        try sql.execute(
            """
            CREATE TABLE notes (id integer PRIMARY KEY, owner text, folder text, subject text, spare text);
            INSERT INTO notes VALUES (1, 'a', 'f', 'one', NULL), (2, 'b', 'f', 'two', NULL);
            """)
        let file = Self.file()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fixture = try SourceFollowingTests.start(
            Self.source(database, table: "notes", data: ["subject", "spare"]), file: file)
        defer { fixture.stop() }
        let follower = try #require(fixture.service.followers.first)
        _ = try Self.items("e-b", fixture) { $0.count == 1 }

        // A row whose list name breaks §1's limits: skipped and counted, the other row of its transaction applied.
        let skipped = follower.statistics.skippedCount
        try sql.execute(
            "BEGIN; INSERT INTO notes VALUES (3, 'no/such list', 'f', 'x', NULL), (4, 'a', 'f', 'four', NULL); COMMIT")
        #expect(try Self.items("e-a", fixture) { $0.count == 2 }.keys.sorted() == ["1", "4"])
        #expect(follower.statistics.skippedCount == skipped + 1)
        #expect(try fixture.versions(["e-b"])["e-b"] == 1)

        // TRUNCATE and inserts after it in one transaction: one version each, only the new rows.
        let before = try fixture.versions(["e-a", "e-b"])
        try sql.execute("BEGIN; TRUNCATE notes; INSERT INTO notes VALUES (5, 'b', 'g', 'five', NULL); COMMIT")
        #expect(try Self.items("e-b", fixture) { $0.keys.sorted() == ["5"] }.keys.sorted() == ["5"])
        #expect(try Self.items("e-a", fixture) { $0.isEmpty }.isEmpty)
        let after = try fixture.versions(["e-a", "e-b"])
        #expect(after == ["e-a": before["e-a"]! + 1, "e-b": before["e-b"]! + 1], "\(before) → \(after)")

        // A column added: nothing breaks. A column the source does not name dropped: nothing either.
        try sql.execute("ALTER TABLE notes ADD COLUMN extra text DEFAULT 'x'")
        try sql.execute("INSERT INTO notes VALUES (6, 'b', 'g', 'six', 's', 'y')")
        #expect(try Self.items("e-b", fixture) { $0.count == 2 }.count == 2)
        try sql.execute("ALTER TABLE notes DROP COLUMN extra; UPDATE notes SET subject = 'seis' WHERE id = 6")
        let six = try Self.items("e-b", fixture) {
            ($0["6"]?["data"] as? [String: Any])?["subject"] as? String == "seis"
        }
        #expect((six["6"]?["data"] as? [String: Any])?["spare"] as? String == "s")
        #expect(follower.statistics.isUp)

        // A column the source names dropped (CASCADE: the publication's column list names it): the source stops, its lists keep serving what they had.
        try sql.execute("ALTER TABLE notes DROP COLUMN spare CASCADE; INSERT INTO notes VALUES (7, 'b', 'g', 'seven')")
        let deadline = Date().addingTimeInterval(20)
        while follower.statistics.isUp, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!follower.statistics.isUp)
        #expect(
            follower.statistics.reasonStopped?.contains("spare") == true, "\(follower.statistics.reasonStopped ?? "")")
        #expect(try Self.items("e-b", fixture) { _ in true }.keys.sorted() == ["5", "6"])
        #expect(try fixture.call("GET", "/v1/lists/e-b").status == 200)
    }
}
