import Foundation
import QuireHTTP
import QuireSources
import QuireTesting
import Synchronization
import Testing

/// The `quire` binary following a source of a real PostgreSQL: every bad configuration of API.md §2b refused at
/// start, and `SIGKILL` at random moments while SQL clients write, with nothing lost, nothing applied twice and no
/// copy again.
@Suite(
    "sources: the quire executable",
    .serialized, .enabled(if: sourceServerURL != nil, "needs QUIRE_TEST_POSTGRES_URL (make test starts one)"))
struct SourceExecutableTests {
    /// A configuration file of one source named `name`, `overrides` replacing its keys.
    static func configuration(_ name: String, url: String, _ overrides: [String: String] = [:]) throws -> String {
        var keys = [
            "name": name, "url": url, "table": "public.messages", "list": "\"inbox-{owner}\"", "section": "folder",
            "order": "[\"sent_at desc\"]", "type": "message", "data": "[subject]",
        ]
        keys.merge(overrides) { $1 }
        let order = ["name", "url", "table", "list", "section", "order", "type", "data"]
        let text = "sources:\n  - " + order.map { "\($0): \(keys[$0]!)" }.joined(separator: "\n    ") + "\n"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("quire-\(UUID()).yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("every bad configuration exits 2 naming the source and the key")
    func badConfigurations() throws {
        let database = try SourceDatabase()
        let role = "quire_norepl_\(database.sourceName)"
        let reader = "quire_reader_\(database.sourceName)"
        let admin = try PostgresConnection(url: database.url)
        defer {
            database.drop()
            _ = try? admin.execute("DROP ROLE IF EXISTS \(role)")
            _ = try? admin.execute("DROP ROLE IF EXISTS \(reader)")
        }
        try admin.execute(
            """
            CREATE TABLE messages (id integer PRIMARY KEY, owner text, folder text, sent_at timestamptz, subject text);
            CREATE TABLE loose (id integer, owner text, folder text, sent_at timestamptz, subject text);
            CREATE ROLE \(role) LOGIN; GRANT SELECT ON messages TO \(role);
            CREATE ROLE \(reader) LOGIN REPLICATION; GRANT SELECT ON messages TO \(reader)
            """)
        let name = database.sourceName
        let withoutReplication = database.url.replacingOccurrences(of: "://postgres@", with: "://\(role)@")
        let notOwner = database.url.replacingOccurrences(of: "://postgres@", with: "://\(reader)@")
        let cases: [([String: String], String)] = [
            (["table": "public.nothere"], "sources[\(name)].table: no such table public.nothere"),
            (["section": "shelf"], "sources[\(name)].section: no column shelf in public.messages"),
            (["data": "[subject, colour]"], "sources[\(name)].data: no column colour in public.messages"),
            (["table": "public.loose"], "sources[\(name)].table: public.loose has no primary key"),
            (["url": withoutReplication], "sources[\(name)].url: the role \(role) has no REPLICATION attribute"),
            (
                ["url": notOwner],
                "sources[\(name)].table: the publication quire_\(name) does not exist, and only the owner of "
                    + "public.messages may create it"
            ),
        ]
        for (overrides, expected) in cases {
            let path = try Self.configuration(name, url: database.url, overrides)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let child = try ExecutableTests.child(["serve", "--port", "0", "--config", path])
            #expect(child.waitForExit(seconds: 20) == 2, "\(overrides): \(child.output)")
            #expect(child.output.contains(expected), "\(overrides): \(child.output)")
        }
    }

    static let lists = (0..<4).map { "k-\($0)" }

    @Test("SIGKILL at random moments while SQL clients write: none lost, none twice, no copy again")
    func killedWhileWriting() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededRandom(seed)
        let database = try SourceDatabase()
        defer { database.drop() }
        let sql = try PostgresConnection(url: database.url)
        try sql.execute(
            """
            CREATE TABLE counts (id integer PRIMARY KEY, owner text NOT NULL, shelf text NOT NULL, n integer NOT NULL);
            INSERT INTO counts SELECT g, 'k-' || (g % 4), 's', 0 FROM generate_series(0, 7) g
            """)
        let config = try Self.configuration(
            database.sourceName, url: database.url,
            [
                "table": "public.counts", "list": "\"{owner}\"", "section": "shelf", "order": "[\"id\"]",
                "type": "row", "data": "[n]",
            ])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("killed-\(UUID()).db").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
            try? FileManager.default.removeItem(atPath: config)
        }
        func start() throws -> (QuireProcess, Int) {
            let child = try QuireProcess(
                ["serve", "--port", "0", "--config", config, "--storage", file, "--log-format", "json"],
                environment: ["QUIRE_DEMO_SEED": "false"])
            return (child, try child.waitForPort())
        }
        var (child, port) = try start()
        let copied = try Self.versions(port: port, until: { $0.values.allSatisfy { $0 > 0 } })
        #expect(child.output.contains("the table is copied"))

        let writers = Writers()
        let url = database.url
        let threads = (1...3).map { writer in
            DetachedThread.startJoinable { writers.write(url: url, seed: seed &+ UInt64(writer), first: 1000 * writer) }
        }
        for restart in 0..<8 {
            usleep(UInt32(Int.random(in: 150_000...900_000, using: &random)))
            // A restart goes on from the stored position: it never copies the table again.
            #expect(restart == 0 || !child.output.contains("the table is copied"), "copied again: \(child.output)")
            kill(child.pid, SIGKILL)
            _ = child.waitForExit(seconds: 10)
            (child, port) = try start()
        }
        let expected = writers.stop(threads, after: copied)
        let final = try Self.versions(port: port, until: { $0 == expected })
        #expect(final == expected, "seed \(seed)")
        #expect(!child.output.contains("the table is copied"))
        let rows = try sql.query("SELECT owner, count(*), sum(n) FROM counts GROUP BY owner ORDER BY owner").rows
        for row in rows {
            let page = try Self.page(row[0]!, port: port)
            let items = (page["sections"] as? [[String: Any]] ?? []).flatMap { $0["items"] as? [[String: Any]] ?? [] }
            let sum = items.reduce(0) { $0 + (($1["data"] as? [String: Any])?["n"] as? Int ?? 0) }
            #expect("\(items.count)" == row[1]! && "\(sum)" == row[2]!, "\(row) against \(items.count), \(sum)")
        }
        kill(child.pid, SIGTERM)
        #expect(child.waitForExit(seconds: 10) == 0)
    }

    @Test("a cluster of two: one instance follows, the other takes over when it is killed; none lost, none twice")
    func clusterTakeover() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        try Self.withClusterDatabases { database, lists, config in
            func start(_ instance: String) throws -> (QuireProcess, Int) {
                let child = try Self.instance(instance, config: config, lists: lists)
                return (child, try child.waitForPort())
            }
            func waitFor(_ line: String, in child: QuireProcess) {
                let deadline = Date().addingTimeInterval(20)
                while !child.output.contains(line) && Date() < deadline { usleep(20_000) }
                #expect(child.output.contains(line), "\(line): \(child.output)")
            }
            let (first, firstPort) = try start("qa")
            let copied = try Self.versions(port: firstPort, until: { $0.values.allSatisfy { $0 > 0 } })
            waitFor("the table is copied", in: first)
            let (second, port) = try start("qb")
            waitFor("another instance follows the source", in: second)

            let writers = Writers()
            let url = database.url
            let threads = (1...2).map { writer in
                DetachedThread.startJoinable {
                    writers.write(url: url, seed: seed &+ UInt64(writer), first: 1000 * writer)
                }
            }
            usleep(700_000)
            kill(first.pid, SIGKILL)
            _ = first.waitForExit(seconds: 10)
            waitFor("taking the source over", in: second)
            usleep(500_000)
            let expected = writers.stop(threads, after: copied)
            let final = try Self.versions(port: port, until: { $0 == expected })
            #expect(final == expected, "seed \(seed): \(second.output)")
            #expect(!second.output.contains("the table is copied"))

            // The instance started again waits in its turn.
            let (again, _) = try start("qa")
            waitFor("another instance follows the source", in: again)
            for child in [again, second] {
                kill(child.pid, SIGTERM)
                #expect(child.waitForExit(seconds: 10) == 0)
            }
        }
    }

    @Test("a standby instance answers 503 source-syncing while no copy of the table has finished, then follows")
    func standbyWhileUncopied() throws {
        try Self.withClusterDatabases { database, lists, config in
            // The lock an instance copying the table would hold: this connection plays that instance.
            let copying = try PostgresConnection(url: database.url)
            let lock = "SELECT pg_try_advisory_lock(hashtext('quire source'), hashtext($1))"
            #expect(try copying.query(lock, ["quire_\(database.sourceName)"]).rows.first?[0] == "t")
            let child = try Self.instance("qs", config: config, lists: lists)
            let port = try child.waitForPort()
            let deadline = Date().addingTimeInterval(20)
            while !child.output.contains("another instance follows the source") && Date() < deadline { usleep(20_000) }
            // A moment for the first look at the store, made before the first wait for the lock.
            var status = 0
            var body = ""
            for _ in 0..<100 {
                let response = try HTTPClientConnection(host: "127.0.0.1", port: port).request("GET", "/v1/lists/k-0")
                (status, body) = (response.status, String(decoding: response.body, as: UTF8.self))
                if status == 503 { break }
                usleep(20_000)
            }
            #expect(status == 503 && body.contains("source-syncing"), "\(status) \(body): \(child.output)")

            _ = try copying.query("SELECT pg_advisory_unlock_all()")
            let copied = try Self.versions(port: port, until: { $0.values.allSatisfy { $0 > 0 } })
            #expect(copied.values.allSatisfy { $0 > 0 }, "\(copied): \(child.output)")
            #expect(child.output.contains("the table is copied"))
            kill(child.pid, SIGTERM)
            #expect(child.waitForExit(seconds: 10) == 0)
        }
    }

    /// Runs `body` with a source's database, Quire's own store (the cluster's PostgreSQL: another database of the test
    /// server) and the source's configuration on the `counts` table of the first (``counts(in:)``); all removed after.
    static func withClusterDatabases(
        _ body: (_ database: SourceDatabase, _ lists: SourceDatabase, _ config: String) throws -> Void
    ) throws {
        let database = try SourceDatabase()
        let lists = try SourceDatabase()
        defer {
            database.drop()
            lists.drop()
        }
        let config = try counts(in: database)
        defer { try? FileManager.default.removeItem(atPath: config) }
        try body(database, lists, config)
    }

    /// The cluster tests' table, `counts`: 8 rows over the lists `k-0`…`k-3`; returns its source's configuration file.
    static func counts(in database: SourceDatabase) throws -> String {
        let sql = try PostgresConnection(url: database.url)
        try sql.execute(
            """
            CREATE TABLE counts (id integer PRIMARY KEY, owner text NOT NULL, shelf text NOT NULL, n integer NOT NULL);
            INSERT INTO counts SELECT g, 'k-' || (g % 4), 's', 0 FROM generate_series(0, 7) g
            """)
        return try configuration(
            database.sourceName, url: database.url,
            [
                "table": "public.counts", "list": "\"{owner}\"", "section": "shelf", "order": "[\"id\"]",
                "type": "row", "data": "[n]",
            ])
    }

    /// An instance of a cluster whose store is the database `lists`, following (or standing by for) `config`'s source.
    static func instance(_ name: String, config: String, lists: SourceDatabase) throws -> QuireProcess {
        try QuireProcess(
            ["serve", "--port", "0", "--config", config, "--log-format", "json"],
            environment: [
                "QUIRE_DEMO_SEED": "false", "QUIRE_STORAGE_KIND": "postgres", "QUIRE_STORAGE_URL": lists.url,
                "QUIRE_CLUSTER_INSTANCE": name,
            ])
    }

    static func page(_ list: String, port: Int) throws -> [String: Any] {
        let response = try HTTPClientConnection(host: "127.0.0.1", port: port).request(
            "GET", "/v1/lists/\(list)?limit=500")
        guard response.status == 200 else { return ["version": 0] }
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    /// The lists' versions once `done` holds of them (or after 30 s).
    static func versions(port: Int, until done: ([String: Int]) -> Bool) throws -> [String: Int] {
        let deadline = Date().addingTimeInterval(30)
        var versions: [String: Int] = [:]
        repeat {
            for list in lists { versions[list] = try page(list, port: port)["version"] as? Int ?? 0 }
            if done(versions) { break }
            usleep(20_000)
        } while Date() < deadline
        return versions
    }
}

/// SQL clients writing transactions of one or two lists until told to stop, counting the transactions committed per
/// list; few inserts, so that a page of 500 holds every row of a list.
final class Writers: Sendable {
    let writing = Atomic<Bool>(true)
    let touches = Mutex<[String: Int]>([:])
    let failures = Mutex<[String]>([])

    /// Stops the writers (`threads`, each running ``write(url:seed:first:)``), expects none failed, and returns the
    /// version each list of the table has once all is applied: its version after the copy, `copied`, plus one for
    /// every transaction that touched it.
    func stop(_ threads: [DetachedThread.Joinable], after copied: [String: Int]) -> [String: Int] {
        writing.store(false, ordering: .relaxed)
        threads.forEach { $0.join() }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let touches = touches.withLock { $0 }
        return Dictionary(
            uniqueKeysWithValues: SourceExecutableTests.lists.map { ($0, copied[$0]! + touches[$0, default: 0]) })
    }

    func write(url: String, seed: UInt64, first: Int) {
        var random = SeededRandom(seed)
        var next = first
        do {
            let sql = try PostgresConnection(url: url)
            while writing.load(ordering: .relaxed) {
                let row = Int.random(in: 0..<8, using: &random)
                var statements = ["UPDATE counts SET n = n + 1 WHERE id = \(row)"]
                var lists: Set<String> = ["k-\(row % 4)"]
                if next < first + 60, Int.random(in: 0..<6, using: &random) == 0 {
                    next += 1
                    statements.append("INSERT INTO counts VALUES (\(next), 'k-\(next % 4)', 's', 0)")
                    lists.insert("k-\(next % 4)")
                }
                try sql.execute("BEGIN; " + statements.joined(separator: "; ") + "; COMMIT")
                touches.withLock { for list in lists { $0[list, default: 0] += 1 } }
                // Fast enough to be mid-transaction at every kill, slow enough for a debug build to catch up.
                usleep(3_000)
            }
        } catch {
            failures.withLock { $0.append("\(error)") }
        }
    }
}
