import Foundation
import NIOCore
import PostgresNIO
public import QuireCore
import Synchronization

/// The stored list is not at the version a write was built on (the transaction stays open, row locked).
struct VersionMismatch: Error {}

extension PostgresListStore {
    /// Stores `next` on top of `previous`, in one transaction, if the stored list is still at `previous`
    /// (see the type): the rows that changed, the list's version, and the write in the log.
    ///
    /// - Returns: the commit's log position.
    /// - Throws: ``StoreConflict`` when another instance committed the list first; ``PostgresStoreError``
    ///   when the write cannot be logged (`write` is `nil`) or the database fails. Nothing is stored then.
    public func commit(
        list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?
    ) throws -> Int64? {
        guard let write else {
            throw PostgresStoreError("a write that is not a ListWrite cannot be replayed by other instances")
        }
        let changes = next.storageChanges(since: previous, keepsLabels: write.keepsLabels)
        let (kind, body) = write.logged
        return try transaction(list: list, creating: previous == nil) { connection, beginning in
            try lockList(
                list, expecting: previous.map { ($0.version, position) }, beginning: beginning, on: connection)
            if previous == nil {
                try checkCreation(of: list, numbered: next.version, on: connection)
                try deleteRows(of: list, on: connection)
            }
            let written = try writeRows(changes, list: list, on: connection)
            let appended = append(
                list: list, version: next.version, kind: kind, body: ByteBuffer(bytes: body),
                sizes: (next.sectionCount, next.itemCount), isNew: previous == nil, on: connection)
            try waitAll(written)
            return try logPosition(appended, list: list)
        }
    }

    /// Removes `list` if it is still at `previous`, and logs the delete.
    public func delete(list: String, previous: ListVersion, at position: Int64) throws -> Int64? {
        try transaction(list: list, creating: false) { connection, beginning in
            try lockList(list, expecting: (previous.version, position), beginning: beginning, on: connection)
            try deleteRows(of: list, on: connection)
            _ = try connection.query("DELETE FROM quire_list WHERE name = \(list)", logger: logger).wait(
                within: patience)
            let retired = Int64(bitPattern: previous.version)
            _ = try connection.query(
                """
                INSERT INTO quire_retired (name, version) VALUES (\(list), \(retired))
                ON CONFLICT (name) DO UPDATE SET version = greatest(quire_retired.version, excluded.version)
                """,
                logger: logger
            ).wait(within: patience)
            return try logPosition(
                append(
                    list: list, version: previous.version, kind: "delete", body: nil, sizes: nil, isNew: false,
                    on: connection),
                list: list)
        }
    }

    /// Runs `body` in a transaction, or in the transaction a conflict left open on this list (whose row
    /// lock this instance holds, so this attempt cannot lose again). A unique violation while creating a
    /// list means another instance created it first.
    private func transaction(
        list: String, creating: Bool, _ body: (PostgresConnection, _ beginning: Bool) throws -> Int64
    ) throws -> Int64 {
        let held = heldLocks.withLock { $0.removeValue(forKey: list) }
        let connection = try held ?? connections.acquire()
        var committing = false
        do {
            let position = try body(connection, held == nil)
            committing = true
            _ = try connection.query("COMMIT", logger: logger).wait(within: patience)
            connections.release(connection)
            notifier.announce(list, position: position)
            return position
        } catch is VersionMismatch {
            // Keep the transaction and the row lock: the registry replays what the other instance wrote
            // (on this connection) and makes its write again here, with no one else able to commit between.
            heldLocks.withLock { $0[list] = connection }
            throw StoreConflict(list: list)
        } catch {
            connections.discard(connection, after: error)
            // A unique violation: another instance created the list first; a deadlock or serialization
            // failure: PostgreSQL chose this transaction to lose a race. Both are conflicts to replay and retry.
            let state = PostgresConnections.sqlState(of: error)
            if (creating && state == "23505") || state == "40P01" || state == "40001" {
                throw StoreConflict(list: list)
            }
            // COMMIT sent and no answer from the server (the connection failed, or the deadline passed): the
            // transaction may have committed. An error the server reported means it rolled back.
            if committing && state == nil {
                throw StoreOutcomeUnknown(
                    "committing list \"\(list)\": \(PostgresConnections.describe(error)); the commit may have been made"
                )
            }
            if let error = error as? PostgresStoreError { throw error }
            throw PostgresStoreError("writing list \"\(list)\": \(PostgresConnections.describe(error))")
        }
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
    private func lockList(
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

    /// Under the name's advisory lock (``lockList(_:expecting:on:)``), for a list created: that its first
    /// version goes on from the last one of a list of that name deleted before (another instance may have
    /// created and deleted it since this one read that number: a conflict, whose replay brings the number), and
    /// forgets that number.
    private func checkCreation(of list: String, numbered version: UInt64, on connection: PostgresConnection) throws {
        let retired = try retiredVersion(of: list, on: connection)
        guard retired > 0 else { return }
        // Checked before anything is deleted: the transaction stays open for the write made again.
        guard retired < version else { throw VersionMismatch() }
        _ = try connection.query("DELETE FROM quire_retired WHERE name = \(list)", logger: logger).wait(
            within: patience)
    }

    /// Logs the change at the sequence's next position (the list is locked: its positions grow in its commit
    /// order) and sets the list's row to that position (`currval`, the same session's last `nextval`) with the
    /// version and `sizes` as of that version (`nil` for a delete, whose row is gone). Sent and not waited for:
    /// the log's answer carries the position (``logPosition(_:list:)``).
    ///
    /// - Returns: the log's answer, and the list row's.
    private func append(
        list: String, version: UInt64, kind: String, body: ByteBuffer?, sizes: (sections: Int, items: Int)?,
        isNew: Bool, on connection: PostgresConnection
    ) -> [EventLoopFuture<PostgresQueryResult>] {
        let stored = Int64(bitPattern: version)
        let logged = connection.query(
            """
            INSERT INTO quire_log (position, list, version, kind, body, committed_at)
            VALUES (nextval('quire_log_position'), \(list), \(stored), \(kind), \(body), extract(epoch from clock_timestamp()))
            RETURNING position
            """,
            logger: logger)
        guard let (sections, items) = sizes.map({ (Int64($0.sections), Int64($0.items)) }) else { return [logged] }
        let row: PostgresQuery =
            isNew
            // A plain insert: a list created meanwhile by another instance is a unique violation.
            ? """
            INSERT INTO quire_list (name, version, position, sections, items, sized_version)
            VALUES (\(list), \(stored), currval('quire_log_position'), \(sections), \(items), \(stored))
            """
            : """
            UPDATE quire_list SET version = \(stored), position = currval('quire_log_position'),
                sections = \(sections), items = \(items), sized_version = \(stored)
            WHERE name = \(list)
            """
        return [logged, connection.query(row, logger: logger)]
    }

    /// The log position `append`'s answers carry, once both are in.
    private func logPosition(_ appended: [EventLoopFuture<PostgresQueryResult>], list: String) throws -> Int64 {
        let position = try appended[0].wait(within: patience).first?.decode(Int64.self)
        for answer in appended.dropFirst() {
            guard try answer.wait(within: patience).metadata.rows == 1 else {
                throw PostgresStoreError("list \"\(list)\" has no row to update")
            }
        }
        guard let position else { throw PostgresStoreError("list \"\(list)\": the log gave no position") }
        return position
    }

    private func deleteRows(of list: String, on connection: PostgresConnection) throws {
        _ = try connection.query("DELETE FROM quire_item WHERE list = \(list)", logger: logger).wait(within: patience)
        _ = try connection.query("DELETE FROM quire_section WHERE list = \(list)", logger: logger).wait(
            within: patience)
    }

    /// The rows that changed, as the SQLite store writes them: old rows first, so that new positions never
    /// meet a stale one.
    ///
    /// The statements are sent one after another without waiting for each answer (the connection runs them in
    /// order): the positions of the kept siblings new rows go between first, then every write. An error aborts
    /// the transaction, and every statement after it fails too: the caller waits for the returned answers in
    /// order (``waitAll(_:)``), so the first error is the one thrown.
    ///
    /// - Returns: the answers still to wait for.
    private func writeRows(
        _ changes: StorageChanges, list: String, on connection: PostgresConnection
    ) throws -> [EventLoopFuture<PostgresQueryResult>] {
        var anchors: [String: EventLoopFuture<PostgresQueryResult>] = [:]
        func lookUp(_ id: String?, in rows: Rows) {
            guard let id, anchors[rows.rawValue + "\0" + id] == nil else { return }
            anchors[rows.rawValue + "\0" + id] = connection.query(
                "SELECT position FROM \(unescaped: rows.rawValue) WHERE list = \(list) AND id = \(id)", logger: logger)
        }
        for run in changes.placedSections {
            lookUp(run.after, in: .section)
            lookUp(run.before, in: .section)
        }
        for run in changes.placedItems {
            lookUp(run.after, in: .item)
            lookUp(run.before, in: .item)
        }
        func position(of id: String?, in rows: Rows) throws -> [UInt8]? {
            guard let id, let answer = anchors[rows.rawValue + "\0" + id] else { return nil }
            guard let buffer = try answer.wait(within: patience).first?.decode(ByteBuffer.self) else {
                throw PostgresStoreError("the stored rows of list \"\(list)\" lack \(rows) \"\(id)\"")
            }
            return Array(buffer.readableBytesView)
        }
        let sectionPositions = try changes.placedSections.map { run in
            StoragePosition.between(
                try position(of: run.after, in: .section), try position(of: run.before, in: .section),
                count: run.sections.count)
        }
        let itemPositions = try changes.placedItems.map { run in
            StoragePosition.between(
                try position(of: run.after, in: .item), try position(of: run.before, in: .item), count: run.items.count)
        }

        var sent: [EventLoopFuture<PostgresQueryResult>] = []
        for section in changes.removedSections {
            sent.append(
                connection.query("DELETE FROM quire_section WHERE list = \(list) AND id = \(section)", logger: logger))
        }
        for item in changes.removedItems + changes.movedItems {
            sent.append(
                connection.query("DELETE FROM quire_item WHERE list = \(list) AND id = \(item)", logger: logger))
        }
        for (run, positions) in zip(changes.placedSections, sectionPositions) {
            for (section, position) in zip(run.sections, positions) {
                let header = section.header.map { ByteBuffer(bytes: $0) }
                let footer = section.footer.map { ByteBuffer(bytes: $0) }
                sent.append(
                    connection.query(
                        """
                        INSERT INTO quire_section (list, id, position, header, footer)
                        VALUES (\(list), \(section.id), \(ByteBuffer(bytes: position)), \(header), \(footer))
                        ON CONFLICT (list, id) DO UPDATE
                        SET position = excluded.position, header = excluded.header, footer = excluded.footer
                        """,
                        logger: logger))
            }
        }
        for section in changes.updatedSections {
            let header = section.header.map { ByteBuffer(bytes: $0) }
            let footer = section.footer.map { ByteBuffer(bytes: $0) }
            sent.append(
                connection.query(
                    "UPDATE quire_section SET header = \(header), footer = \(footer) WHERE list = \(list) AND id = \(section.id)",
                    logger: logger))
        }
        for (run, positions) in zip(changes.placedItems, itemPositions) {
            let (nested, parent): (Int16, String) =
                switch run.container {
                case .section(let section): (0, section)
                case .item(let item): (1, item)
                }
            for (item, position) in zip(run.items, positions) {
                sent.append(
                    connection.query(
                        """
                        INSERT INTO quire_item (list, nested, parent, position, id, body)
                        VALUES (\(list), \(nested), \(parent), \(ByteBuffer(bytes: position)), \(item.id), \(ByteBuffer(bytes: item.body)))
                        """,
                        logger: logger))
            }
        }
        for item in changes.updatedItems {
            sent.append(
                connection.query(
                    "UPDATE quire_item SET body = \(ByteBuffer(bytes: item.body)) WHERE list = \(list) AND id = \(item.id)",
                    logger: logger))
        }
        return sent
    }

    /// Waits for every answer, in the order the statements were sent (the first error is the one thrown).
    private func waitAll(_ answers: [EventLoopFuture<PostgresQueryResult>]) throws {
        for answer in answers { _ = try answer.wait(within: patience) }
    }

    /// Which rows a kept sibling's position is read from.
    private enum Rows: String {
        case section = "quire_section"
        case item = "quire_item"
    }

}
