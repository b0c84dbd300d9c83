import Foundation
import QuireCore
import QuireHTTP
import QuireSources
import QuireStore
import QuireTesting
import Testing

@testable import QuireAPI

/// A table of a real PostgreSQL (`wal_level = logical`) kept as lists by a running service on a SQLite file: the
/// first copy, then every committed transaction as one version of each list it touches, read over HTTP and compared
/// with the table read with `ORDER BY`; writes through the API refused; a restart that goes on without a copy.
@Suite(
    "sources: lists kept from a table",
    .enabled(if: sourceServerURL != nil, "needs QUIRE_TEST_POSTGRES_URL (make test starts one)"))
struct SourceFollowingTests {
    @Test("copy, inserts, updates, moves, list changes, deletes, TOAST kept, TRUNCATE, a restart without a copy")
    func tableToLists() throws {
        let database = try SourceDatabase()
        defer { database.drop() }
        let sql = try PostgresConnection(url: database.url)
        try sql.execute(
            """
            CREATE TABLE messages (
                id integer PRIMARY KEY, owner text NOT NULL, folder text NOT NULL, sent_at timestamptz NOT NULL,
                subject text, body text, secret text);
            INSERT INTO messages VALUES
                (1, 'ann', 'inbox', '2026-12-01 10:00:00+00', 'one', 'b1', 's'),
                (2, 'ann', 'inbox', '2026-12-01 11:00:00+00', 'two', 'b2', 's'),
                (3, 'ann', 'archive', '2026-11-01 09:00:00+00', 'three', NULL, 's'),
                (4, 'bob', 'inbox', '2026-12-01 08:00:00+00', 'four', 'b4', 's');
            """)
        let source = SourceConfiguration(
            name: database.sourceName, url: database.url, table: TableName(name: "messages"),
            list: ListTemplate(prefix: "inbox-", column: "owner"), section: "folder",
            order: [OrderTerm(column: "sent_at", direction: .descending)], type: .constant("message"),
            data: ["subject", "body", "sent_at"])
        #expect(SourceFollower.refusals(of: source, limits: ListLimits()).isEmpty)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sources-\(UUID()).db").path
        defer { try? FileManager.default.removeItem(atPath: file) }

        var fixture = try Self.start(source, file: file)
        try Self.waitForModel(fixture, sql)
        let ann = try fixture.page("inbox-ann")
        let item = try #require((ann["sections"] as? [[String: Any]])?.first?["items"] as? [[String: Any]])
        // Exactly the data columns leave the database.
        #expect(Set((item[0]["data"] as? [String: Any] ?? [:]).keys) == ["subject", "body", "sent_at"])

        let transactions = [
            "INSERT INTO messages VALUES (5, 'ann', 'inbox', '2026-12-01 10:30:00+00', 'five', NULL, 's')",
            "UPDATE messages SET subject = 'uno' WHERE id = 1",
            "UPDATE messages SET sent_at = '2026-12-01 12:00:00+00' WHERE id = 1",
            "UPDATE messages SET folder = 'spam' WHERE id = 2",
            "UPDATE messages SET folder = 'archive' WHERE id = 2",
            "UPDATE messages SET owner = 'bob' WHERE id = 5",
            "DELETE FROM messages WHERE id = 3",
            """
            BEGIN; INSERT INTO messages VALUES (6, 'cat', 'inbox', '2026-12-02 00:00:00+00', 'six', NULL, 's');
            UPDATE messages SET subject = 'cuatro' WHERE id = 4; DELETE FROM messages WHERE id = 1; COMMIT
            """,
            "UPDATE messages SET id = 7 WHERE id = 2",
        ]
        for statement in transactions {
            let before = try fixture.versions(["inbox-ann", "inbox-bob", "inbox-cat"])
            let touched = try Self.listsTouched(by: statement, sql)
            try sql.execute(statement)
            try Self.waitForModel(fixture, sql)
            let after = try fixture.versions(["inbox-ann", "inbox-bob", "inbox-cat"])
            for list in ["inbox-ann", "inbox-bob", "inbox-cat"] {
                #expect(
                    after[list]! - before[list]! == (touched.contains(list) ? 1 : 0),
                    "\(list) after \(statement): \(before[list]!) → \(after[list]!)")
            }
        }
        #expect(
            try fixture.call("PUT", "/v1/lists/inbox-ann", json: ["sections": []]).problemSlug() == "list-from-source")
        #expect(try fixture.call("DELETE", "/v1/lists/inbox-bob").status == 409)

        // A 10 KB value stored out of line (TOAST), unchanged by an update of another column, keeps its value.
        try sql.execute(
            """
            ALTER TABLE messages ALTER COLUMN body SET STORAGE EXTERNAL;
            UPDATE messages SET body = (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 320) g) WHERE id = 4
            """)
        try Self.waitForModel(fixture, sql)
        try sql.execute("UPDATE messages SET subject = 'quatre' WHERE id = 4")
        try Self.waitForModel(fixture, sql)
        let bob = try fixture.page("inbox-bob")
        let bodies = (bob["sections"] as? [[String: Any]] ?? []).flatMap { $0["items"] as? [[String: Any]] ?? [] }
            .compactMap { ($0["data"] as? [String: Any])?["body"] as? String }
        #expect(bodies.contains { $0.utf8.count == 10_240 })

        // A restart goes on from the stored position: no copy (the versions stay), then the next transaction.
        let versions = try fixture.versions(["inbox-ann", "inbox-bob"])
        fixture.stop()
        fixture = try Self.start(source, file: file)
        let restarted = try fixture.versions(["inbox-ann", "inbox-bob"])
        #expect(restarted == versions, "before \(versions), after \(restarted)")
        try sql.execute("INSERT INTO messages VALUES (8, 'ann', 'inbox', '2026-12-03 00:00:00+00', 'eight', NULL, 's')")
        try Self.waitForModel(fixture, sql)
        #expect(try fixture.versions(["inbox-ann"])["inbox-ann"] == versions["inbox-ann"]! + 1)

        // A name the template makes, with no row: an empty list at version 0, whose first row is version 1.
        let empty = try fixture.call("GET", "/v1/lists/inbox-dan")
        #expect(empty.status == 200)
        #expect(try empty.object()["version"] as? Int == 0)
        try sql.execute("INSERT INTO messages VALUES (9, 'dan', 'inbox', '2026-12-03 00:00:00+00', 'nine', NULL, 's')")
        try Self.waitForModel(fixture, sql)
        #expect(try fixture.page("inbox-dan")["version"] as? Int == 1)
        // The follower counts a batch's rows once it has its commit's outcome: just after the lists show them.
        let counted = "quire_source_rows_total{source=\"\(source.name)\",op=\"insert\"} 2"
        var metrics = try fixture.call("GET", "/metrics").text
        let counting = Date().addingTimeInterval(5)
        while !metrics.contains(counted) && Date() < counting {
            Thread.sleep(forTimeInterval: 0.02)
            metrics = try fixture.call("GET", "/metrics").text
        }
        #expect(metrics.contains("quire_source_up{source=\"\(source.name)\"} 1"))
        #expect(metrics.contains(counted))

        try sql.execute("TRUNCATE messages")
        try Self.waitForModel(fixture, sql)
        for list in ["inbox-ann", "inbox-bob", "inbox-cat", "inbox-dan"] {
            #expect(try (fixture.page(list)["sections"] as? [Any])?.isEmpty == true, "\(list) after TRUNCATE")
        }
        // The index shows a source's lists with rows only, the page after them read on (limit 1: one list a page).
        try sql.execute("INSERT INTO messages VALUES (10, 'eve', 'inbox', '2026-12-04 00:00:00+00', 'ten', NULL, 's')")
        try Self.waitForModel(fixture, sql)
        let index = try fixture.call("GET", "/v1/lists?prefix=inbox-&limit=1").object()
        #expect((index["lists"] as? [[String: Any]])?.compactMap { $0["list"] as? String } == ["inbox-eve"], "\(index)")
        #expect((index["page"] as? [String: Any])?["hasNext"] as? Bool == false, "\(index)")
        fixture.stop()
    }

    /// A service on `file` following `source`, once its follower is up and done copying.
    static func start(_ source: SourceConfiguration, file: String) throws -> APIFixture {
        let fixture = try APIFixture(store: try SQLiteListStore(path: file)) { $0.sources = [source] }
        let follower = try #require(fixture.service.followers.first)
        let deadline = Date().addingTimeInterval(30)
        while !(follower.statistics.isUp && !follower.statistics.isSyncing), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        try #require(follower.statistics.isUp, "the follower did not start: \(follower.statistics.reasonStopped ?? "")")
        return fixture
    }

    /// Waits until every list of the table, and each of the first four owners', reads over HTTP as `ORDER BY` has the
    /// rows (their subjects and bodies too).
    static func waitForModel(_ fixture: APIFixture, _ sql: PostgresConnection) throws {
        let rows = try sql.query(
            """
            SELECT owner, folder, id || ':' || coalesce(subject, '') || ':' || coalesce(length(body), 0)
            FROM messages ORDER BY owner, folder COLLATE "C", sent_at DESC, id
            """)
        var model: [String: [[String]]] = [:]
        var sections: [String: [String]] = [:]
        for row in rows.rows {
            let list = "inbox-" + row[0]!
            if sections[list]?.last != row[1]! {
                sections[list, default: []].append(row[1]!)
                model[list, default: []].append([])
            }
            model[list]![model[list]!.count - 1].append(row[2]!)
        }
        // The lists of the table's rows too: a list whose first row is the one awaited (inbox-eve) is none of these.
        let lists = Set(["inbox-ann", "inbox-bob", "inbox-cat", "inbox-dan"]).union(model.keys).sorted()
        let deadline = Date().addingTimeInterval(20)
        var seen: [String: [[String]]] = [:]
        repeat {
            seen = [:]
            for list in lists { seen[list] = try fixture.outline(list) }
            if lists.allSatisfy({ seen[$0]! == (model[$0] ?? []) }) { return }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        Issue.record("the lists \(seen) are not the table's \(model)")
    }

    /// The lists a statement's rows are in before and after it (read before it runs, by the ids it names).
    static func listsTouched(by statement: String, _ sql: PostgresConnection) throws -> Set<String> {
        var touched: Set<String> = []
        for (text, owner) in [("'ann'", "ann"), ("'bob'", "bob"), ("'cat'", "cat")] where statement.contains(text) {
            touched.insert("inbox-\(owner)")
        }
        let ids = statement.matches(of: /id = (\d+)/).map { String($0.output.1) }
        for id in ids {
            if let owner = try sql.query("SELECT owner FROM messages WHERE id = $1", [id]).rows.first?[0] ?? nil {
                touched.insert("inbox-\(owner)")
            }
        }
        return touched
    }
}

/// The test server of Tests/QuireSourcesTests/TestServer.swift (linked here as Support/SourceTestServer.swift).
let sourceServerURL = serverURL

extension SourceDatabase {
    /// A source name no other test uses (`[a-z0-9_]`, short enough for its slot's name).
    var sourceName: String { "t" + name.dropFirst("quire_sources_".count) }
}

extension APIFixture {
    /// The list's page as JSON (an empty list when it does not exist).
    func page(_ list: String) throws -> [String: Any] {
        let response = try call("GET", "/v1/lists/\(list)?limit=500")
        if response.status == 404 { return ["sections": [Any](), "version": 0] }
        try #require(response.status == 200, "GET \(list): \(response.status) \(response.text)")
        return try response.object()
    }

    /// The list's items by section, as a page reads: `id:subject:length of body` each.
    func outline(_ list: String) throws -> [[String]] {
        (try page(list)["sections"] as? [[String: Any]] ?? []).map { section in
            (section["items"] as? [[String: Any]] ?? []).map { item in
                let data = item["data"] as? [String: Any] ?? [:]
                let body = (data["body"] as? String)?.utf8.count ?? 0
                return "\(item["id"] as? String ?? ""):\(data["subject"] as? String ?? ""):\(body)"
            }
        }
    }

    func versions(_ lists: [String]) throws -> [String: Int] {
        var versions: [String: Int] = [:]
        for list in lists { versions[list] = try page(list)["version"] as? Int ?? 0 }
        return versions
    }
}
