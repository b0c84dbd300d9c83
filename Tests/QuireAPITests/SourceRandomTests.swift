import Foundation
import QuireClient
import QuireCore
import QuireSources
import QuireStore
import QuireTesting
import Testing

@testable import QuireAPI

/// Random SQL transactions against a followed table, each checked against a model read from the table with `ORDER BY`
/// (the source's order, `COLLATE "C"`): every list over HTTP equals its rows, every list a transaction touched moved
/// exactly one version and no other moved, and a session in each change format holds exactly its window.
@Suite(
    "sources: random transactions against the table's ORDER BY",
    .enabled(if: sourceServerURL != nil, "needs QUIRE_TEST_POSTGRES_URL (make test starts one)"))
struct SourceRandomTests {
    static let owners = ["a", "b", "c", "d"]
    /// Sections whose byte order differs from a locale's (capitals first, a letter beyond ASCII last).
    static let folders = ["inbox", "Archive", "spam", "zz", "étoile"]
    static let lists = owners.map { "r-\($0)" }

    @Test("random transactions: lists equal the model, one version per touched list, sessions follow")
    func randomTransactions() throws {
        let seed =
            ProcessInfo.processInfo.environment["QUIRE_TEST_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 0...UInt64.max)
        var random = SeededRandom(seed)
        let database = try SourceDatabase()
        defer { database.drop() }
        let sql = try PostgresConnection(url: database.url)
        try sql.execute(
            "CREATE TABLE items (id integer PRIMARY KEY, owner text NOT NULL, folder text NOT NULL, rank integer, "
                + "title text, note text)")
        var writer = RandomWriter(sql: sql)
        for _ in 0..<24 { try sql.execute(writer.insert(&random)) }
        let source = SourceConfiguration(
            name: database.sourceName, url: database.url, table: TableName(name: "items"),
            list: ListTemplate(prefix: "r-", column: "owner"), section: "folder",
            order: [
                OrderTerm(column: "rank", direction: .ascending), OrderTerm(column: "title", direction: .descending),
            ],
            type: .constant("row"), data: ["title", "rank"])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("random-\(UUID()).db").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fixture = try SourceFollowingTests.start(source, file: file)
        defer { fixture.stop() }
        var model = try Self.model(sql)
        try Self.waitFor(model, fixture, seed: seed)
        let sessions = try ["batch", "sequential"].map {
            try SessionClient(fixture, list: "r-a", options: ["limit": 4, "format": $0])
        }

        for step in 0..<50 {
            let statement = try writer.transaction(&random)
            let before = try fixture.versions(Self.lists)
            try sql.execute(statement)
            let after = try Self.model(sql)
            let touched = Self.touched(from: model, to: after)
            model = after
            try Self.waitFor(model, fixture, seed: seed)
            let versions = try fixture.versions(Self.lists)
            for list in Self.lists {
                #expect(
                    versions[list]! - before[list]! == (touched.contains(list) ? 1 : 0),
                    "seed \(seed), step \(step), \(list) after \(statement): \(before[list]!) → \(versions[list]!)")
            }
            for session in sessions {
                try session.sync()
                try Self.check(session, model: model["r-a"] ?? [], seed: seed, step: step)
            }
        }
    }

    @Test("a backlog of random transactions and a TRUNCATE, committed in batches: one version per touched list each")
    func backlogInBatches() throws {
        let seed =
            ProcessInfo.processInfo.environment["QUIRE_TEST_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 0...UInt64.max)
        var random = SeededRandom(seed)
        let database = try SourceDatabase()
        defer { database.drop() }
        let sql = try PostgresConnection(url: database.url)
        try sql.execute(
            "CREATE TABLE items (id integer PRIMARY KEY, owner text NOT NULL, folder text NOT NULL, rank integer, "
                + "title text, note text)")
        var writer = RandomWriter(sql: sql)
        for _ in 0..<24 { try sql.execute(writer.insert(&random)) }
        let source = SourceConfiguration(
            name: database.sourceName, url: database.url, table: TableName(name: "items"),
            list: ListTemplate(prefix: "r-", column: "owner"), section: "folder",
            order: [
                OrderTerm(column: "rank", direction: .ascending), OrderTerm(column: "title", direction: .descending),
            ],
            type: .constant("row"), data: ["title", "rank"])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("backlog-\(UUID()).db").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        var fixture = try SourceFollowingTests.start(source, file: file)
        var model = try Self.model(sql)
        try Self.waitFor(model, fixture, seed: seed)
        let before = try fixture.versions(Self.lists)
        fixture.stop()

        // While Quire is down the slot keeps every transaction: at the restart they arrive at once, a backlog.
        var expected = before
        let transactions = 60
        for step in 0..<transactions {
            let statement: String
            switch step {
            case 30: statement = "TRUNCATE items"
            case 31: statement = "BEGIN; \(writer.insert(&random)); COMMIT"
            default: statement = try writer.transaction(&random)
            }
            try sql.execute(statement)
            let after = try Self.model(sql)
            for list in Self.touched(from: model, to: after) { expected[list]! += 1 }
            model = after
        }
        fixture = try SourceFollowingTests.start(source, file: file)
        defer { fixture.stop() }
        try Self.waitFor(model, fixture, seed: seed)
        #expect(try fixture.versions(Self.lists) == expected, "seed \(seed): versions from \(before)")
        let statistics = try #require(fixture.service.followers.first).statistics
        #expect(statistics.transactionCount == transactions, "seed \(seed)")
        #expect(
            statistics.commitCount < transactions / 2,
            "seed \(seed): \(statistics.commitCount) commits for \(transactions) transactions")

        // The rows' places were recorded through the batches: after another restart, no transaction applied twice,
        // and each row is found where the batches left it.
        fixture.stop()
        fixture = try SourceFollowingTests.start(source, file: file)
        #expect(try fixture.versions(Self.lists) == expected, "seed \(seed)")
        for _ in 0..<5 { try sql.execute(try writer.transaction(&random)) }
        model = try Self.model(sql)
        try Self.waitFor(model, fixture, seed: seed)
    }

    /// A row as the model holds it: its section and its item as `id:title:rank`.
    struct Row: Equatable {
        var folder: String
        var item: String
    }

    /// Every list's rows in the source's order, read with `ORDER BY`, `COLLATE "C"`.
    static func model(_ sql: PostgresConnection) throws -> [String: [Row]] {
        let rows = try sql.query(
            """
            SELECT 'r-' || owner, folder, id || ':' || coalesce(title, '~') || ':' || coalesce(rank::text, '~')
            FROM items ORDER BY owner, folder COLLATE "C", rank, title COLLATE "C" DESC, id
            """)
        var model: [String: [Row]] = [:]
        for row in rows.rows { model[row[0]!, default: []].append(Row(folder: row[1]!, item: row[2]!)) }
        return model
    }

    /// The lists whose rows differ between two models.
    static func touched(from old: [String: [Row]], to new: [String: [Row]]) -> Set<String> {
        Set(lists.filter { old[$0] ?? [] != new[$0] ?? [] })
    }

    /// The list's sections and items as a page reads them, in the model's terms.
    static func rows(_ list: String, _ fixture: APIFixture) throws -> [Row] {
        (try fixture.page(list)["sections"] as? [[String: Any]] ?? []).flatMap { section in
            (section["items"] as? [[String: Any]] ?? []).map { item in
                Row(folder: section["id"] as? String ?? "?", item: Self.outline(item))
            }
        }
    }

    static func outline(_ item: [String: Any]) -> String {
        let data = item["data"] as? [String: Any] ?? [:]
        let rank = (data["rank"] as? NSNumber).map { "\($0.intValue)" } ?? "~"
        return "\(item["id"] as? String ?? ""):\(data["title"] as? String ?? "~"):\(rank)"
    }

    static func waitFor(_ model: [String: [Row]], _ fixture: APIFixture, seed: UInt64) throws {
        let deadline = Date().addingTimeInterval(20)
        var seen: [String: [Row]] = [:]
        repeat {
            for list in lists { seen[list] = try rows(list, fixture) }
            if lists.allSatisfy({ seen[$0]! == model[$0] ?? [] }) { return }
            Thread.sleep(forTimeInterval: 0.01)
        } while Date() < deadline
        Issue.record("seed \(seed): the lists \(seen) are not the table's \(model)")
        throw SourceTestFailure()
    }

    /// The session's window is what the server holds for it, and a contiguous run of the list's rows.
    static func check(_ session: SessionClient, model: [Row], seed: UInt64, step: Int) throws {
        #expect(
            session.window == (try session.fixture.freshWindow(ofSession: session.id)),
            "seed \(seed), step \(step): the \(session.format) window is not the server's")
        let window = session.window.sections.flatMap { section in
            section.items.map { item in
                let data = item["data"]
                let rank: String
                if case .number(let number)? = data?["rank"] { rank = "\(Int(number))" } else { rank = "~" }
                let title = data?["title"]?.stringValue ?? "~"
                return Row(folder: section.id, item: "\(item["id"]?.stringValue ?? ""):\(title):\(rank)")
            }
        }
        let start = model.firstIndex(of: window.first ?? Row(folder: "", item: "")) ?? 0
        #expect(
            window.isEmpty || Array(model.dropFirst(start).prefix(window.count)) == window,
            "seed \(seed), step \(step): the \(session.format) window \(window) is not a run of \(model)")
    }
}

struct SourceTestFailure: Error {}

/// The same transactions for the same seed.
extension SeededRandom: RandomNumberGenerator {}

/// Random statements on `items`, each row of a transaction changed once and changed for real (a new title, rank,
/// folder, owner or key), so that the lists it touches are exactly those whose rows differ after it.
struct RandomWriter {
    let sql: PostgresConnection
    var nextID = 1
    var nextTitle = 1

    init(sql: PostgresConnection) { self.sql = sql }

    mutating func insert(_ random: inout SeededRandom) -> String {
        defer { nextID += 1 }
        let rank = random.next() % 5 == 0 ? "NULL" : "\(Int.random(in: 0..<6, using: &random))"
        return "INSERT INTO items VALUES (\(nextID), '\(SourceRandomTests.owners.randomElement(using: &random)!)', "
            + "'\(SourceRandomTests.folders.randomElement(using: &random)!)', \(rank), \(title(&random)), 'n')"
    }

    /// A title, now and then `NULL` (first for `desc`) or one of few values (ties broken by the key).
    mutating func title(_ random: inout SeededRandom) -> String {
        defer { nextTitle += 1 }
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return "NULL"
        case 1: return "'Same'"
        default: return "'t\(nextTitle)'"
        }
    }

    /// One to four changes of distinct rows, as one transaction.
    mutating func transaction(_ random: inout SeededRandom) throws -> String {
        let ids = try sql.query("SELECT id, owner, folder FROM items ORDER BY id").rows.map { ($0[0]!, $0[1]!, $0[2]!) }
        var unused = ids.shuffled(using: &random)
        var statements: [String] = []
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard let row = unused.popLast(), Int.random(in: 0..<6, using: &random) != 0 else {
                statements.append(insert(&random))
                continue
            }
            let (id, owner, folder) = row
            let otherOwner = SourceRandomTests.owners.filter { $0 != owner }.randomElement(using: &random)!
            let otherFolder = SourceRandomTests.folders.filter { $0 != folder }.randomElement(using: &random)!
            let changes = [
                "title = 'u\(nextTitle)'", "rank = coalesce(rank, 0) + \(Int.random(in: 1...3, using: &random))",
                "rank = NULL, title = 'v\(nextTitle)'", "folder = '\(otherFolder)'", "owner = '\(otherOwner)'",
                "owner = '\(otherOwner)', folder = '\(otherFolder)'", "note = 'only the note', title = 'w\(nextTitle)'",
            ]
            nextTitle += 1
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1: statements.append("DELETE FROM items WHERE id = \(id)")
            case 2:
                statements.append("UPDATE items SET id = \(nextID) WHERE id = \(id)")
                nextID += 1
            default:
                statements.append(
                    "UPDATE items SET \(changes.randomElement(using: &random)!) WHERE id = \(id)")
            }
        }
        // Now and then the rows of one transaction changed by one statement.
        if statements.count == 1, unused.count >= 3, Int.random(in: 0..<4, using: &random) == 0 {
            let several = unused.suffix(3).map { $0.0 }.joined(separator: ", ")
            statements.append("UPDATE items SET rank = coalesce(rank, 0) + 7 WHERE id IN (\(several))")
        }
        return "BEGIN; " + statements.joined(separator: "; ") + "; COMMIT"
    }
}
