import Foundation
import NIOCore
import PostgresNIO
public import QuireCore
import Synchronization

/// The stored list is not at the version a write was built on (the transaction stays open, row locked).
struct VersionMismatch: Error {}

extension PostgresListStore {
    /// Stores `next` on top of `previous` if the stored list is still at `previous` (see the type): the rows that
    /// changed, the list's version, and the write in the log, in one transaction.
    ///
    /// The first attempt is one call of ``commitFunction`` outside any transaction (the call is the transaction),
    /// after one read of the kept siblings' positions when new rows go between siblings whose positions the list's
    /// last commit here did not leave known (``KnownPositions``). When the list is not at `previous`, the call
    /// writes nothing and the write goes on in a transaction that locks the list
    /// (``lockList(_:expecting:beginning:on:)``), kept open for the write made again after the replay: there the
    /// same call writes, and `COMMIT` commits.
    ///
    /// - Returns: the commit's log position.
    /// - Throws: ``StoreConflict`` when another instance committed the list first; ``PostgresStoreError``
    ///   when the write cannot be logged (`write` is `nil`) or the database fails; `StoreOutcomeUnknown` when
    ///   the connection failed while committing. Nothing is stored otherwise.
    public func commit(
        list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?
    ) throws -> Int64? {
        guard let write else {
            throw PostgresStoreError("a write that is not a ListWrite cannot be replayed by other instances")
        }
        let (kind, body) = write.logged
        let request = CommitRequest(
            list: list, expected: previous.map { ($0.version, position) }, version: next.version, kind: kind,
            body: body, sizes: (next.sectionCount, next.itemCount),
            changes: next.storageChanges(since: previous, keepsLabels: write.keepsLabels))
        let held = heldLocks.withLock { $0.removeValue(forKey: list) }
        let connection = try held ?? connections.acquire()
        var committing = false
        do {
            if held == nil, let position = try store(request, on: connection, locked: false, committing: &committing) {
                connections.release(connection)
                notifier.announce(list, position: position)
                return position
            }
            committing = false
            try lockList(list, expecting: request.expected, beginning: held == nil, on: connection)
            guard let position = try store(request, on: connection, locked: true, committing: &committing) else {
                throw VersionMismatch()
            }
            committing = true
            _ = try connection.query("COMMIT", logger: logger).wait(within: patience)
            connections.release(connection)
            notifier.announce(list, position: position)
            return position
        } catch {
            throw settle(
                error, list: list, on: connection, creating: previous == nil, committing: committing, prepared: true)
        }
    }

    /// Removes `list` if it is still at `previous`, and logs the delete.
    public func delete(list: String, previous: ListVersion, at position: Int64) throws -> Int64? {
        let held = heldLocks.withLock { $0.removeValue(forKey: list) }
        let connection = try held ?? connections.acquire()
        var committing = false
        do {
            try lockList(list, expecting: (previous.version, position), beginning: held == nil, on: connection)
            let version = Int64(bitPattern: previous.version)
            let answers = [
                connection.query("DELETE FROM quire_item WHERE list = \(list)", logger: logger),
                connection.query("DELETE FROM quire_section WHERE list = \(list)", logger: logger),
                connection.query("DELETE FROM quire_list WHERE name = \(list)", logger: logger),
                connection.query(
                    """
                    INSERT INTO quire_retired (name, version) VALUES (\(list), \(version))
                    ON CONFLICT (name) DO UPDATE SET version = greatest(quire_retired.version, excluded.version)
                    """,
                    logger: logger),
                connection.query(
                    """
                    INSERT INTO quire_log (position, list, version, kind, body, committed_at)
                    VALUES (nextval('quire_log_position'), \(list), \(version), 'delete', NULL,
                        extract(epoch from clock_timestamp()))
                    RETURNING position
                    """,
                    logger: logger),
            ]
            // Sent without waiting for each answer (the connection runs them in order), and waited for in that order:
            // an error aborts the transaction and fails every statement after it, so the first error is thrown.
            for answer in answers.dropLast() { _ = try answer.wait(within: patience) }
            guard let logged = try answers.last?.wait(within: patience).first?.decode(Int64.self) else {
                throw PostgresStoreError("list \"\(list)\": the log gave no position")
            }
            committing = true
            _ = try connection.query("COMMIT", logger: logger).wait(within: patience)
            forgetPositions(of: list)
            connections.release(connection)
            notifier.announce(list, position: logged)
            return logged
        } catch {
            throw settle(
                error, list: list, on: connection, creating: false, committing: committing, prepared: false)
        }
    }

    /// What a write that failed with `error` on `connection` throws, once the connection is dealt with. A version
    /// mismatch keeps the transaction and the row lock: the registry replays what the other instance wrote (on
    /// this connection) and makes its write again here, with no one else able to commit between. Any other
    /// error gives the connection back rolled back, or closes it.
    ///
    /// - Parameters:
    ///   - creating: whether the write creates the list: a unique violation then means another instance created
    ///     it first.
    ///   - committing: whether the statement that commits was sent.
    ///   - prepared: whether the write ran prepared statements on `connection` (then it is closed).
    private func settle(
        _ error: any Error, list: String, on connection: PostgresConnection, creating: Bool, committing: Bool,
        prepared: Bool
    ) -> any Error {
        if error is VersionMismatch {
            heldLocks.withLock { $0[list] = connection }
            return StoreConflict(list: list)
        }
        connections.discard(connection, after: error, reusable: !prepared)
        // A unique violation: another instance created the list first; a deadlock or serialization failure:
        // PostgreSQL chose this transaction to lose a race. Both are conflicts to replay and retry.
        let state = PostgresConnections.sqlState(of: error)
        if (creating && state == "23505") || state == "40P01" || state == "40001" {
            return StoreConflict(list: list)
        }
        // The commit sent and no answer from the server (the connection failed, or the deadline passed): it may
        // have been made. An error the server reported means it rolled back.
        if committing && state == nil {
            return StoreOutcomeUnknown(
                "committing list \"\(list)\": \(PostgresConnections.describe(error)); the commit may have been made")
        }
        if let error = error as? PostgresStoreError { return error }
        return PostgresStoreError("writing list \"\(list)\": \(PostgresConnections.describe(error))")
    }

    /// Stores `request` with one call of ``commitFunction``, after reading the kept siblings' positions when new
    /// rows go between them and they are not known (``placements(of:on:locked:)``).
    ///
    /// - Parameters:
    ///   - locked: whether `connection` is in a transaction that holds the list locked at the expected version.
    ///     Outside one, a kept sibling not found may be another instance's commit since the write was built: that
    ///     is left to the locked attempt; and the call is the commit (`committing` is set before it is sent).
    /// - Returns: the log position, or `nil` when the list is not at the expected version (nothing written).
    func store(
        _ request: CommitRequest, on connection: PostgresConnection, locked: Bool, committing: inout Bool
    ) throws -> Int64? {
        guard let placements = try placements(of: request, on: connection, locked: locked) else { return nil }
        committing = !locked
        let call = request.call(placing: placements.positions)
        let rows = try connection.rows(of: call, logger: logger).wait(within: patience)
        guard let answer = rows.first else {
            throw PostgresStoreError("list \"\(request.list)\": quire_commit answered no row")
        }
        guard let position = answer else {
            forgetPositions(of: request.list)
            return nil
        }
        remember(placements, of: request, at: position)
        return position
    }

    /// Ends a write of `list` that lost a race and then did not commit (its rebuilt write was refused): the
    /// transaction left open for it is rolled back and its row lock released.
    public func endWrite(list: String) {
        guard let connection = heldLocks.withLock({ $0.removeValue(forKey: list) }) else { return }
        if (try? connection.query("ROLLBACK", logger: logger).wait(within: patience)) != nil {
            connections.release(connection)
        } else {
            connections.discard(connection, after: PostgresStoreError("rollback failed"))
        }
    }

    /// The connection holding `list`'s row lock after a conflict, if any.
    func heldConnection(for list: String) -> PostgresConnection? {
        heldLocks.withLock { $0[list] }
    }

    /// Locks the list's row until the transaction ends, and checks that the list is at `expected`: its
    /// version and the log position of that version (`nil`: that it does not exist). The position tells a
    /// list deleted and created again from the one the write was built on, whatever their version numbers.
    /// A list that does not exist has no row to lock: an advisory lock on its name stands in, so that two
    /// instances creating it at once go one after the other (rather than deadlock on its rows).
    func lockList(
        _ list: String, expecting expected: (version: UInt64, position: Int64)?, beginning: Bool,
        on connection: PostgresConnection
    ) throws {
        // Sent one after another without waiting for each answer (the connection runs them in order): one wake-up
        // of this thread instead of three. BEGIN's answer is checked before anything is written.
        let begun = beginning ? connection.query("BEGIN", logger: logger) : nil
        let locked = connection.query("SELECT pg_advisory_xact_lock(hashtext(\(list)))", logger: logger)
        let selected = connection.query(
            "SELECT version, position FROM quire_list WHERE name = \(list) FOR UPDATE", logger: logger)
        _ = try begun?.wait(within: patience)
        _ = try locked.wait(within: patience)
        let rows = try selected.wait(within: patience)
        let stored = try rows.first.map { row in
            let (version, position) = try row.decode((Int64, Int64).self)
            return (UInt64(bitPattern: version), position)
        }
        switch (stored, expected) {
        case (nil, nil): return
        case (let stored?, let expected?) where stored == expected: return
        default: throw VersionMismatch()
        }
    }
}
