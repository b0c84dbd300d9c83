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

    @Test("an idle table keeps no log of the database's other writes: the slot is told what was sent is applied")
    func idleTableKeepsNoLog() throws {
        let database = try SourceDatabase()
        defer { database.drop() }
        let sql = try PostgresConnection(url: database.url)
        try sql.execute(
            """
            CREATE TABLE notes (id integer PRIMARY KEY, owner text, folder text, subject text, spare text);
            CREATE TABLE other (id serial PRIMARY KEY, pad text);
            INSERT INTO notes VALUES (1, 'a', 'f', 'one', NULL);
            """)
        let file = Self.file()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fixture = try SourceFollowingTests.start(
            Self.source(database, table: "notes", data: ["subject"]), file: file)
        defer { fixture.stop() }
        let follower = try #require(fixture.service.followers.first)
        _ = try Self.items("e-a", fixture) { $0.count == 1 }
        let applied = follower.statistics.applied

        // About 3 MB of log that holds nothing of the table.
        try sql.execute("INSERT INTO other (pad) SELECT repeat('x', 100) FROM generate_series(1, 20000)")
        let end = try #require(try sql.query("SELECT pg_current_wal_lsn()::text").rows.first?[0].flatMap(LSN.init))
        #expect(end.rawValue > applied.rawValue + 1_000_000)
        var confirmed = LSN.invalid
        let deadline = Date().addingTimeInterval(20)
        repeat {
            confirmed = try database.slotState(follower.source.slot)?.confirmedFlush ?? .invalid
            if confirmed.rawValue + 65_536 >= end.rawValue { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        #expect(confirmed.rawValue + 65_536 >= end.rawValue, "confirmed \(confirmed), the log at \(end)")
        // The store's position is still the table's last transaction: a restart goes on from the slot's.
        #expect(follower.statistics.applied == applied)
        try sql.execute("INSERT INTO notes VALUES (2, 'a', 'f', 'two', NULL)")
        #expect(try Self.items("e-a", fixture) { $0.count == 2 }.count == 2)
    }

    /// Runs `scripts/local/pg-local action dir` (a PostgreSQL server of the test's own: the shared one stays up for
    /// the other tests), within 60 s; its output. Spawned and waited for with posix_spawn and waitpid: Foundation's
    /// Process does not see this script end (its child, the server, lives on), and its output goes to a file, not a
    /// pipe, which the server would hold open.
    static func pgLocal(_ action: String, _ dir: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("pg-local-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let arguments = ["/bin/bash", root.appendingPathComponent("scripts/local/pg-local").path, action, dir]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var pid: pid_t = 0
        try #require(posix_spawn(&pid, "/bin/bash", &actions, nil, &argv, environ) == 0, "pg-local: spawn failed")
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(60)
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard Date() < deadline else {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw PgLocalFailed(description: "pg-local \(action) still running after 60 s")
            }
            usleep(20_000)
        }
        // The exit status: bits 8-15 of the wait status, when it exited.
        let exited = status & 0x7f == 0
        guard exited && (status >> 8) & 0xff == 0 else {
            throw PgLocalFailed(description: "pg-local \(action) failed (wait status \(status))")
        }
        return try String(contentsOfFile: output, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    struct PgLocalFailed: Error, CustomStringConvertible {
        let description: String
    }

    @Test("the database restarted under the follower: it connects again and goes on, none lost, no copy again")
    func databaseRestarted() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("quire-pg-\(UUID())").path
        let started = try Self.pgLocal("start", dir)
        defer { _ = try? Self.pgLocal("remove", dir) }
        let url = started.replacingOccurrences(of: "://quire@", with: "://postgres@")
        try PostgresConnection(url: url).execute(
            """
            CREATE TABLE notes (id integer PRIMARY KEY, owner text, folder text, subject text, spare text);
            INSERT INTO notes VALUES (1, 'a', 'f', 'one', NULL);
            """)
        let source = SourceConfiguration(
            name: "restarted", url: url, table: TableName(name: "notes"),
            list: ListTemplate(prefix: "e-", column: "owner"), section: "folder", order: [OrderTerm(column: "id")],
            type: .constant("row"), data: ["subject"])
        let file = Self.file()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fixture = try SourceFollowingTests.start(source, file: file)
        defer { fixture.stop() }
        _ = try Self.items("e-a", fixture) { $0.count == 1 }
        let before = try fixture.versions(["e-a"])["e-a"]!

        _ = try Self.pgLocal("stop", dir)
        // The lists serve what they had while the database is down.
        #expect(try fixture.call("GET", "/v1/lists/e-a").status == 200)
        _ = try Self.pgLocal("start", dir)
        try PostgresConnection(url: url).execute(
            "BEGIN; INSERT INTO notes VALUES (2, 'a', 'f', 'two', NULL); INSERT INTO notes VALUES (3, 'a', 'f', 'three', NULL); COMMIT"
        )
        #expect(try Self.items("e-a", fixture) { $0.count == 3 }.keys.sorted() == ["1", "2", "3"])
        #expect(try fixture.versions(["e-a"])["e-a"] == before + 1)
        #expect(try #require(fixture.service.followers.first).statistics.isUp)
    }

    @Test("a slot dropped by hand: the table is copied again, and its lists answer 503 meanwhile, cached pages too")
    func slotDropped() throws {
        let database = try SourceDatabase()
        defer { database.drop() }
        let sql = try PostgresConnection(url: database.url)
        // Enough rows that the copy lasts while the test reads.
        try sql.execute(
            """
            CREATE TABLE notes (id integer PRIMARY KEY, owner text, folder text, subject text, spare text);
            INSERT INTO notes SELECT g, 'o' || (g % 300), 'f', 's' || g, NULL FROM generate_series(1, 30000) g;
            INSERT INTO notes VALUES (0, 'a', 'f', 'zero', NULL);
            """)
        let file = Self.file()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fixture = try SourceFollowingTests.start(
            Self.source(database, table: "notes", data: ["subject"]), file: file)
        defer { fixture.stop() }
        let follower = try #require(fixture.service.followers.first)
        _ = try Self.items("e-a", fixture) { $0.count == 1 }
        #expect(try fixture.call("GET", "/v1/lists/e-a").status == 200)  // the page is cached now

        let slot = follower.source.slot
        var dropped = false
        for _ in 0..<100 where !dropped {
            _ = try? database.administer(
                "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1", [slot])
            dropped = (try? database.administer("SELECT pg_drop_replication_slot($1)", [slot])) != nil
            if !dropped { Thread.sleep(forTimeInterval: 0.01) }
        }
        try #require(dropped)
        try sql.execute("INSERT INTO notes VALUES (-1, 'a', 'f', 'minus one', NULL)")
        var statuses = Set<Int>()
        let deadline = Date().addingTimeInterval(60)
        repeat {
            let answer = try fixture.call("GET", "/v1/lists/e-a")
            statuses.insert(answer.status)
            if answer.status == 503 { #expect(try answer.problemSlug() == "source-syncing") }
            if answer.status == 200, statuses.contains(503) { break }
            Thread.sleep(forTimeInterval: 0.005)
        } while Date() < deadline
        #expect(statuses.contains(503), "\(statuses)")
        // The new copy holds the row committed while the slot was gone.
        #expect(try Self.items("e-a", fixture) { $0.count == 2 }.keys.sorted() == ["-1", "0"])
    }

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
