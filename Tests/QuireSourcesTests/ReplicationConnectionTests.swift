import Foundation
import QuireSources
import Testing

/// The replication connection against a real PostgreSQL: a slot, its snapshot, the stream, status updates.
@Suite(
    "logical replication on PostgreSQL",
    .enabled(if: serverURL != nil, "needs QUIRE_TEST_POSTGRES_URL (make test starts one)"))
struct ReplicationConnectionTests {
    @Test("a copy under the slot's snapshot, then exactly the transactions committed after it")
    func snapshotThenStream() throws {
        try withDatabase { database in
            let writer = try database.connect()
            try writer.execute(
                """
                CREATE TABLE messages (id integer PRIMARY KEY, title text, body text);
                INSERT INTO messages VALUES (1, 'one', 'a'), (2, 'two', NULL), (3, 'three', 'c');
                CREATE PUBLICATION quire_test FOR TABLE messages;
                """)
            let replication = try database.replication()
            let system = try replication.identifySystem()
            #expect(system.database == database.name)
            #expect(system.timeline >= 1)
            #expect(!system.systemID.isEmpty)
            let name = database.slot("flow")
            let slot = try replication.createSlot(named: name)
            #expect((slot.name, slot.outputPlugin) == (name, "pgoutput"))
            #expect(slot.consistentPoint >= system.position)
            // Committed after the slot's consistent point: streamed, never copied.
            try writer.execute("INSERT INTO messages VALUES (4, 'four', NULL)")
            try writer.execute("UPDATE messages SET title = 'uno' WHERE id = 1")
            try writer.execute("DELETE FROM messages WHERE id = 2")
            try writer.execute(
                "BEGIN; INSERT INTO messages VALUES (5, 'five', 'e'); UPDATE messages SET id = 6 WHERE id = 5; COMMIT")

            let copier = try database.connect()
            var copied: [[String?]] = []
            try copier.transaction(snapshot: slot.snapshotName) {
                try copier.copy("SELECT id, title, body FROM messages ORDER BY id") { copied.append($0) }
            }
            #expect(copied == [["1", "one", "a"], ["2", "two", nil], ["3", "three", "c"]])
            // After the copy: TRUNCATE is not MVCC-safe, a copy after it would see the table empty whatever its
            // snapshot.
            try writer.execute("TRUNCATE messages")

            try replication.startReplication(slot: name, at: slot.consistentPoint, publications: ["quire_test"])
            #expect(replication.isStreaming)
            let transactions = try replication.transactions(5)
            try #require(transactions.count == 5)
            #expect(
                transactions.map { $0.map(\.kind) } == [
                    ["B", "R", "I", "C"], ["B", "U", "C"], ["B", "D", "C"], ["B", "I", "U", "C"],
                    // A truncated table has new storage: its Relation is sent again.
                    ["B", "R", "T", "C"],
                ])
            let relation = try #require(transactions[0][1].relation)
            #expect((relation.name, relation.columns.map(\.name)) == ("messages", ["id", "title", "body"]))
            #expect(transactions[0][2].insert?.new.strings == ["4", "four", nil])
            #expect(
                transactions[1][1].update
                    == PgOutput.Update(relationID: relation.id, old: nil, new: [.text("1"), .text("uno"), .text("a")]))
            #expect(transactions[2][1].delete?.old == .key([.text("2"), .null, .null]))
            #expect(transactions[3][2].update?.old == .key([.text("5"), .null, .null]))
            #expect(transactions[3][2].update?.new.strings == ["6", "five", "e"])
            #expect(transactions[4][2].truncate?.relationIDs == [relation.id])
            let commits = transactions.compactMap { $0.last?.commit }
            #expect(commits.map(\.endLSN) == commits.map(\.endLSN).sorted())
            #expect(commits.allSatisfy { $0.commitLSN > slot.consistentPoint })

            // Confirming the last commit moves the slot's confirmed_flush_lsn there.
            let last = try #require(commits.last).endLSN
            #expect(try database.slotState(name)?.confirmedFlush == slot.consistentPoint)
            try replication.sendStatus(StandbyStatusUpdate(flushed: last))
            try waitUntil("confirmed_flush_lsn reaches \(last)") {
                try database.slotState(name)?.confirmedFlush == last
            }

            try replication.stopReplication()
            #expect(!replication.isStreaming)
            // The connection runs commands again after a clean stop.
            try replication.dropSlot(named: name)
            #expect(try database.slotState(name) == nil)
        }
    }

    @Test("after a confirmation and a new connection, the stream goes on after the confirmed commit")
    func resumeAfterConfirmation() throws {
        try withDatabase { database in
            let writer = try database.connect()
            try writer.execute("CREATE TABLE t (id integer PRIMARY KEY); CREATE PUBLICATION quire_test FOR TABLE t")
            let name = database.slot("resume")
            do {
                let replication = try database.replication()
                let slot = try replication.createSlot(named: name)
                try writer.execute("INSERT INTO t VALUES (1)")
                try writer.execute("INSERT INTO t VALUES (2)")
                try replication.startReplication(slot: name, at: slot.consistentPoint, publications: ["quire_test"])
                let first = try replication.transactions(1)
                let end = try #require(first.first?.last?.commit).endLSN
                try replication.sendStatus(StandbyStatusUpdate(flushed: end))
                try waitUntil("the first commit confirmed") { try database.slotState(name)?.confirmedFlush == end }
                try replication.stopReplication()
            }
            try writer.execute("INSERT INTO t VALUES (3)")
            let replication = try database.replication()
            try replication.startReplication(slot: name, publications: ["quire_test"])
            let rest = try replication.transactions(2)
            #expect(rest.map { $0.compactMap(\.insert).map(\.new.strings) } == [[["2"]], [["3"]]])
            try replication.stopReplication()
            try replication.dropSlot(named: name)
        }
    }

    @Test("a quiet stream times out; a status update asking for a reply gets a keepalive; a temporary slot goes")
    func keepaliveAndTimeout() throws {
        try withDatabase { database in
            try database.connect().execute(
                "CREATE TABLE t (id integer PRIMARY KEY); CREATE PUBLICATION quire_test FOR TABLE t")
            let name = database.slot("quiet")
            do {
                let replication = try database.replication()
                let slot = try replication.createSlot(named: name, temporary: true)
                try replication.startReplication(slot: name, at: slot.consistentPoint, publications: ["quire_test"])
                // The server sends a keepalive whenever it wakes on log that other databases wrote (and other tests
                // write it all the time), so quiet is found with a short timeout, and longer reads are timed.
                var quiet = false
                for _ in 0..<500 where !quiet {
                    quiet = try replication.readMessage(timeout: .milliseconds(1)) == nil
                }
                #expect(quiet, "a read with nothing to read returns nil")
                for _ in 0..<3 {
                    let started = ContinuousClock.now
                    let message = try replication.readMessage(timeout: .milliseconds(300))
                    let waited = started.duration(to: .now)
                    #expect(waited < .seconds(2))
                    if message == nil { #expect(waited >= .milliseconds(299)) }
                }
                try replication.sendStatus(StandbyStatusUpdate(flushed: slot.consistentPoint, replyRequested: true))
                guard case .keepalive(let keepalive) = try replication.readMessage(timeout: .seconds(5)) else {
                    Issue.record("no keepalive after a status update that asked for one")
                    return
                }
                #expect(keepalive.end >= slot.consistentPoint)
                let clock = keepalive.serverClock.secondsSinceUnixEpoch
                #expect(abs(clock - PostgresTimestamp.now().secondsSinceUnixEpoch) < 60)
                #expect(try database.slotState(name)?.active == true)
                try replication.stopReplication()
            }
            try waitUntil("the temporary slot is gone with its connection") { try database.slotState(name) == nil }
        }
    }

    @Test("errors carry the server's SQLSTATE: no such slot, a slot that exists, a slot in use, a terminated stream")
    func serverErrors() throws {
        try withDatabase { database in
            try database.connect().execute(
                "CREATE TABLE t (id integer PRIMARY KEY); CREATE PUBLICATION quire_test FOR TABLE t")
            let replication = try database.replication()
            let missing = database.slot("missing")
            let noSlot = #expect(throws: PostgresError.self) {
                try replication.startReplication(slot: missing, publications: ["quire_test"])
            }
            #expect(noSlot?.sqlState == .undefinedObject)
            #expect(noSlot?.context.contains("START_REPLICATION SLOT \"\(missing)\" LOGICAL 0/0") == true)
            #expect(!replication.isStreaming)
            #expect(throws: PostgresError.self) { try replication.dropSlot(named: missing) }

            let name = database.slot("taken")
            let slot = try replication.createSlot(named: name)
            let duplicate = #expect(throws: PostgresError.self) { try replication.createSlot(named: name) }
            #expect(duplicate?.sqlState == .duplicateObject)
            let invalid = #expect(throws: PostgresError.self) { try replication.createSlot(named: "Not-Valid") }
            #expect(invalid?.sqlState == .invalidName)

            try replication.startReplication(slot: name, at: slot.consistentPoint, publications: ["quire_test"])
            let second = try database.replication()
            let inUse = #expect(throws: PostgresError.self) {
                try second.startReplication(slot: name, publications: ["quire_test"])
            }
            #expect(inUse?.sqlState == .objectInUse)
            let busy = #expect(throws: PostgresError.self) { try second.dropSlot(named: name) }
            #expect(busy?.sqlState == .objectInUse)

            _ = try database.administer(
                "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1", [name])
            let ended = #expect(throws: PostgresError.self) {
                for _ in 0..<100 { _ = try replication.readMessage(timeout: .milliseconds(100)) }
            }
            #expect(
                ended?.sqlState == .adminShutdown || ended?.sqlState == .connectionFailure,
                "\(String(describing: ended))")
            #expect(!replication.isStreaming)
            try second.dropSlot(named: name, wait: true)
        }
    }
}

/// Waits up to 10 s for `condition`, recording an issue when it never holds.
func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
    for _ in 0..<200 {
        if try condition() { return }
        usleep(50_000)
    }
    Issue.record("never: \(what)")
}
