import Foundation
import QuireSources
import Testing

/// The plain SQL connection against a real PostgreSQL: statements, typed columns, copies, transactions, errors.
@Suite(
    "PostgreSQL connection (libpq)",
    .enabled(if: serverURL != nil, "needs QUIRE_TEST_POSTGRES_URL (make test starts one)"))
struct PostgresConnectionTests {
    @Test("queries answer text values with their columns' names and types; parameters are text")
    func query() throws {
        try withDatabase { database in
            let connection = try database.connect()
            #expect(connection.serverVersion >= 100_000)
            let rows = try connection.query(
                "SELECT 1::integer AS one, 'x'::text AS letter, NULL::timestamptz AS never, $1::text AS given, $2::text AS absent",
                ["héllo", nil])
            #expect(
                rows.columns == [
                    PostgresColumn(name: "one", typeOID: 23), PostgresColumn(name: "letter", typeOID: 25),
                    PostgresColumn(name: "never", typeOID: 1184), PostgresColumn(name: "given", typeOID: 25),
                    PostgresColumn(name: "absent", typeOID: 25),
                ])
            #expect(rows.rows == [["1", "x", nil, "héllo", nil]])
            #expect(rows.column(named: "given") == 3)
            #expect(rows.commandTag == "SELECT 1")
            try connection.execute(
                "CREATE TABLE t (id integer PRIMARY KEY, at timestamptz); INSERT INTO t VALUES (1, '2026-12-01 10:00:00+00')"
            )
            #expect(try connection.query("SET TIME ZONE 'UTC'; SELECT at FROM t").rows == [["2026-12-01 10:00:00+00"]])
            #expect(try connection.query("INSERT INTO t VALUES (2, NULL)").commandTag == "INSERT 0 1")
            #expect(try connection.describe("SELECT id, at FROM t").map(\.typeOID) == [23, 1184])
            #expect(try connection.quote(identifier: #"My "table""#) == #""My ""table""""#)
            #expect(try connection.quote(literal: "it's") == "'it''s'")
        }
    }

    @Test("a copy streams every row through the callback, escapes and nulls decoded")
    func copy() throws {
        try withDatabase { database in
            let connection = try database.connect()
            try connection.execute(
                #"""
                CREATE TABLE t (id integer PRIMARY KEY, value text);
                INSERT INTO t VALUES (1, E'tab\there'), (2, E'line\nbreak\r'), (3, E'back\\slash'), (4, ''), (5, NULL),
                  (6, 'ünïcode ✓'), (7, '\N'), (8, E'\b\f\013');
                """#)
            var rows: [[String?]] = []
            let count = try connection.copy("SELECT id, value FROM t ORDER BY id") { rows.append($0) }
            #expect(count == 8)
            #expect(
                rows == [
                    ["1", "tab\there"], ["2", "line\nbreak\r"], ["3", "back\\slash"], ["4", ""], ["5", nil],
                    ["6", "ünïcode ✓"], ["7", "\\N"], ["8", "\u{8}\u{C}\u{B}"],
                ])
            var total = 0
            var seen = 0
            let many = try connection.copy("SELECT n, repeat('x', n % 50) FROM generate_series(1, 200000) AS n") {
                row in
                total += Int(row[0] ?? "") ?? 0
                seen += 1
            }
            #expect((many, seen, total) == (200_000, 200_000, 200_000 * 200_001 / 2))
        }
    }

    @Test("a copy whose callback throws is cancelled, and the connection goes on")
    func copyCancelled() throws {
        try withDatabase { database in
            struct Enough: Error {}
            let connection = try database.connect()
            var seen = 0
            #expect(throws: Enough.self) {
                try connection.copy("SELECT n FROM generate_series(1, 10000000) AS n") { _ in
                    seen += 1
                    if seen == 10 { throw Enough() }
                }
            }
            #expect(seen == 10)
            #expect(try connection.query("SELECT 42").rows == [["42"]])
        }
    }

    @Test("transactions commit, roll back on a throw, and refuse to pass off a failed one as committed")
    func transactions() throws {
        try withDatabase { database in
            struct Undo: Error {}
            let connection = try database.connect()
            try connection.execute("CREATE TABLE t (id integer PRIMARY KEY)")
            try connection.transaction { try connection.execute("INSERT INTO t VALUES (1)") }
            #expect(throws: Undo.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (2)")
                    throw Undo()
                }
            }
            let failed = #expect(throws: PostgresError.self) {
                try connection.transaction {
                    _ = try? connection.execute("INSERT INTO t VALUES (1)")
                }
            }
            #expect(failed?.sqlState == .inFailedTransaction)
            #expect(try connection.query("SELECT id FROM t").rows == [["1"]])
            let stale = #expect(throws: PostgresError.self) {
                try connection.transaction(snapshot: "00000003-0000001B-1") {}
            }
            #expect(stale?.sqlState.errorClass == "22")
            #expect(try connection.query("SELECT 1").rows == [["1"]], "the failed import was rolled back")
        }
    }

    @Test("SQL errors carry the server's SQLSTATE, message and what was asked")
    func sqlErrors() throws {
        try withDatabase { database in
            let connection = try database.connect()
            let syntax = #expect(throws: PostgresError.self) { try connection.execute("SELEC 1") }
            #expect(syntax?.sqlState == .syntaxError)
            #expect(syntax?.severity == "ERROR")
            #expect(syntax?.message == #"syntax error at or near "SELEC""#)
            #expect(syntax?.context == "running SELEC 1")
            let table = #expect(throws: PostgresError.self) { try connection.copy("SELECT * FROM nowhere") { _ in } }
            #expect(table?.sqlState == .undefinedTable)
            let hint = #expect(throws: PostgresError.self) { try connection.execute("SELECT nosuchfunction()") }
            #expect(hint?.hint?.isEmpty == false)
            #expect(hint?.description.contains("HINT: ") == true)
        }
    }

    @Test(
        "connection errors: a malformed URL, nothing listening, no such database, a wrong password; never the password")
    func connectionErrors() throws {
        try withDatabase { database in
            let server = try #require(URLComponents(string: database.url))
            let host = "\(server.host ?? "127.0.0.1"):\(server.port ?? 5432)"

            let port = #expect(throws: PostgresError.self) {
                try PostgresConnection(url: "postgres://quire:hunter2-secret@127.0.0.1:notaport/app")
            }
            #expect(port?.sqlState == .unableToConnect)
            #expect(port?.context == "connecting to postgres://quire:***@127.0.0.1:notaport/app")
            let escape = #expect(throws: PostgresError.self) {
                try PostgresConnection(url: "postgres://quire:hun%zzter2-secret@\(host)/app")
            }
            #expect(escape?.sqlState == .unableToConnect)
            #expect(escape?.message.contains("percent") == true, "\(String(describing: escape))")
            let refused = #expect(throws: PostgresError.self) {
                try PostgresConnection(
                    url: "postgres://quire:hunter2-secret@127.0.0.1:1/app", connectTimeout: .seconds(5))
            }
            #expect(refused?.sqlState == .unableToConnect)
            let noDatabase = #expect(throws: PostgresError.self) {
                try PostgresConnection(url: "postgres://postgres:hunter2-secret@\(host)/\(database.name)_missing")
            }
            #expect(noDatabase?.sqlState == .invalidCatalogName)
            #expect(noDatabase?.severity == "FATAL")

            // pg-local asks this role for its password (scram-sha-256); the others are trusted on loopback.
            let role = "quire_password_check"
            let exists = try database.administer("SELECT 1 FROM pg_roles WHERE rolname = $1", [role]).count == 1
            try database.administer(
                "\(exists ? "ALTER" : "CREATE") ROLE \(role) LOGIN REPLICATION PASSWORD 'the-right-one'")
            let wrongURL = "postgres://\(role):hunter2-secret@\(host)/\(database.name)"
            let wrong = #expect(throws: PostgresError.self) { try PostgresConnection(url: wrongURL) }
            #expect(wrong?.sqlState == .invalidPassword, "\(String(describing: wrong))")
            #expect(wrong?.message.contains("password authentication failed") == true)
            let wrongReplication = #expect(throws: PostgresError.self) { try ReplicationConnection(url: wrongURL) }
            #expect(wrongReplication?.sqlState == .invalidPassword)
            _ = try PostgresConnection(url: "postgres://\(role):the-right-one@\(host)/\(database.name)")

            for error in [port, escape, refused, noDatabase, wrong, wrongReplication].compactMap({ $0 }) {
                let everything = "\(error) \(String(reflecting: error)) \(error.message) \(error.context)"
                #expect(!everything.contains("hunter2"), "\(everything)")
                #expect(!everything.contains("zzter2"), "\(everything)")
            }
        }
    }
}
