import Foundation
import QuireSources
import Testing

/// The PostgreSQL server of the integration tests: `QUIRE_TEST_POSTGRES_URL`, a superuser's URL
/// (`postgres://postgres@127.0.0.1:PORT/postgres`) on a server with `wal_level = logical`. `make test` starts one
/// (scripts/local/pg-local); without it the tests skip.
let serverURL = ProcessInfo.processInfo.environment["QUIRE_TEST_POSTGRES_URL"]

/// Runs `body` with a database of its own on the test server, then drops it with any slot a failing test left
/// (a slot left behind would keep the server's log forever). Dropped here rather than when the object is released:
/// Swift may release it as soon as its last use, under connections the test still holds.
func withDatabase(_ body: (SourceDatabase) throws -> Void) throws {
    let database = try SourceDatabase()
    defer { database.drop() }
    try body(database)
}

/// A database of its own on the test server, with a name to make slots from (slots belong to the whole server).
final class SourceDatabase {
    let name: String
    /// The database's URL, as the superuser.
    let url: String
    private let admin: PostgresConnection

    init() throws {
        name = "quire_sources_\(UInt32.random(in: 0...UInt32.max))"
        let server = try #require(serverURL, "QUIRE_TEST_POSTGRES_URL")
        admin = try PostgresConnection(url: server)
        try admin.execute("CREATE DATABASE \(name)")
        let withoutOptions = server.split(separator: "?", maxSplits: 1)[0]
        let base = withoutOptions[..<(withoutOptions.lastIndex(of: "/") ?? withoutOptions.endIndex)]
        url = base + "/" + name
    }

    /// Ends the streams of the database's slots, drops the slots, then the database.
    func drop() {
        let slots = "FROM pg_replication_slots WHERE database = $1"
        _ = try? admin.query("SELECT pg_terminate_backend(active_pid) \(slots) AND active_pid IS NOT NULL", [name])
        for _ in 0..<100 {
            guard let active = try? admin.query("SELECT count(*) \(slots) AND active", [name]), active[0][0] != "0"
            else { break }
            usleep(50_000)
        }
        _ = try? admin.query("SELECT pg_drop_replication_slot(slot_name) \(slots)", [name])
        _ = try? admin.execute("DROP DATABASE \(name) WITH (FORCE)")
    }

    /// A slot name no other test uses.
    func slot(_ purpose: String) -> String { "\(name)_\(purpose)" }

    func connect() throws -> PostgresConnection { try PostgresConnection(url: url) }

    func replication() throws -> ReplicationConnection { try ReplicationConnection(url: url) }

    /// What `pg_replication_slots` says of `slot` (`confirmed_flush_lsn`, whether it is active), or nil when
    /// there is no such slot.
    func slotState(_ slot: String) throws -> (confirmedFlush: LSN?, active: Bool)? {
        let rows = try admin.query(
            "SELECT confirmed_flush_lsn::text, active::text FROM pg_replication_slots WHERE slot_name = $1", [slot])
        guard let row = rows.first else { return nil }
        return (row[0].flatMap(LSN.init), row[1] == "true")
    }

    /// Runs `sql` as the superuser on the server's own database (roles, other databases).
    @discardableResult
    func administer(_ sql: String, _ parameters: [String?] = []) throws -> PostgresRows {
        try admin.query(sql, parameters)
    }
}

extension ReplicationConnection {
    /// The next `count` transactions of the stream, each its messages from Begin to Commit (the Relations sent
    /// before a change among them), read within
    /// `timeout`; keepalives that ask for a reply are answered without confirming anything new.
    func transactions(_ count: Int, timeout: Duration = .seconds(20)) throws -> [[PgOutput.Message]] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var transactions: [[PgOutput.Message]] = []
        var current: [PgOutput.Message] = []
        while transactions.count < count {
            guard ContinuousClock.now < deadline else {
                Issue.record("\(transactions.count) of \(count) transactions within \(timeout)")
                return transactions
            }
            switch try readMessage(timeout: .milliseconds(500)) {
            case .xLogData(let data):
                let message = try PgOutput.Message(decoding: data.payload)
                current.append(message)
                if case .commit = message {
                    transactions.append(current)
                    current = []
                }
            case .keepalive(let keepalive) where keepalive.replyRequested:
                try sendStatus(StandbyStatusUpdate(flushed: .invalid))
            case .keepalive, nil:
                continue
            }
        }
        return transactions
    }
}
