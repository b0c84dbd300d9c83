import Foundation
import NIOCore
import PostgresNIO
public import QuireCore

extension PostgresListStore {
    /// Every stored list at its stored version (tools and tests), read in one `REPEATABLE READ` transaction.
    public func loadAll(limits: ListLimits) throws -> [String: ListVersion] {
        try reading { connection in
            var lists: [String: ListVersion] = [:]
            let rows = try connection.query("SELECT name, version FROM quire_list", logger: logger).wait(
                within: patience)
            for row in rows {
                let (name, version) = try row.decode((String, Int64).self)
                lists[name] = try restore(name, version: UInt64(bitPattern: version), limits: limits, on: connection)
            }
            return lists
        }
    }

    /// One list as stored now, with the log position of its last change (for a list that does not exist, the
    /// position of the last change logged under its name, 0 if none: its earlier lives are all in the answer).
    public func load(list: String, limits: ListLimits) throws -> (version: ListVersion?, position: Int64) {
        try reading(on: heldConnection(for: list)) { connection in
            let rows = try connection.query(
                "SELECT version, position FROM quire_list WHERE name = \(list)", logger: logger
            ).wait(within: patience)
            guard let row = rows.first else {
                let logged = try connection.query(
                    "SELECT coalesce(max(position), 0) FROM quire_log WHERE list = \(list)", logger: logger
                ).wait(within: patience)
                return (nil, try logged.first?.decode(Int64.self) ?? 0)
            }
            let (version, position) = try row.decode((Int64, Int64).self)
            return (try restore(list, version: UInt64(bitPattern: version), limits: limits, on: connection), position)
        }
    }

    /// The last version of a deleted list of this name, 0 if none (see ``ListStore/retiredVersion(of:)``); on
    /// the connection holding the list's lock after a conflict, if any.
    public func retiredVersion(of list: String) throws -> UInt64 {
        try reading(on: heldConnection(for: list)) { try retiredVersion(of: list, on: $0) }
    }

    /// The same, read on `connection` (in its transaction).
    func retiredVersion(of list: String, on connection: PostgresConnection) throws -> UInt64 {
        let rows = try connection.query("SELECT version FROM quire_retired WHERE name = \(list)", logger: logger)
            .wait(within: patience)
        return try rows.first.map { UInt64(bitPattern: try $0.decode(Int64.self)) } ?? 0
    }

    /// The changes of `list` after log position `position`, oldest first (a write that lost a race reads
    /// what the winner wrote).
    public func changes(of list: String, after position: Int64) throws -> [LoggedChange] {
        let query: PostgresQuery = """
            SELECT position, list, version, kind, body, committed_at FROM quire_log
            WHERE list = \(list) AND position > \(position) ORDER BY position
            """
        do {
            // After a conflict, on the connection that holds the list's row lock: it sees every commit of the
            // list, and no other can come until this instance's write.
            if let held = heldConnection(for: list) {
                return try Self.changes(held.query(query, logger: logger).wait(within: patience))
            }
            return try connections.with { connection in
                try Self.changes(connection.query(query, logger: logger).wait(within: patience))
            }
        } catch let error as StoredListError {
            throw PostgresStoreError("the log does not replay: \(error)")
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw PostgresStoreError("reading the log: \(PostgresConnections.describe(error))")
        }
    }

    /// Of `lists` (names, each with the log position an instance holds it at), those the store holds at another
    /// position, with the store's (`nil`: the store no longer has the list): the change feed's sweep.
    public func positions(differingFrom lists: [(name: String, position: Int64)]) throws -> [(
        name: String, position: Int64?
    )] {
        guard !lists.isEmpty else { return [] }
        return try connections.with { connection in
            let rows = try connection.query(
                """
                SELECT held.name, stored.position
                FROM unnest(\(lists.map(\.name))::text[], \(lists.map(\.position))::bigint[]) AS held (name, position)
                LEFT JOIN quire_list AS stored ON stored.name = held.name
                WHERE stored.position IS DISTINCT FROM held.position
                """,
                logger: logger
            ).wait(within: patience)
            return try rows.map { row in try row.decode((String, Int64?).self) }
        }
    }

    private static func changes(_ rows: PostgresQueryResult) throws -> [LoggedChange] {
        try rows.map { row in
            let (position, list, version, kind, body, committedAt) = try row.decode(
                (Int64, String, Int64, String, ByteBuffer?, Double).self)
            let write: ListWrite? =
                kind == "delete"
                ? nil : try ListWrite(kind: kind, body: body?.readableBytesView ?? ByteBuffer().readableBytesView)
            return LoggedChange(
                position: position, list: list, version: UInt64(bitPattern: version), write: write,
                committedAt: committedAt)
        }
    }

    /// Runs `body` in a read-only `REPEATABLE READ` transaction (one snapshot); or, given the connection
    /// that holds a list's row lock after a conflict, in that transaction (no other instance can change
    /// that list meanwhile, and the pool may have no other connection to give).
    private func reading<Result>(
        on held: PostgresConnection? = nil, _ body: (PostgresConnection) throws -> Result
    ) throws -> Result {
        do {
            if let held { return try body(held) }
            return try connections.with { connection in
                _ = try connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger).wait(
                    within: patience)
                let result = try body(connection)
                _ = try connection.query("COMMIT", logger: logger).wait(within: patience)
                return result
            }
        } catch let error as PostgresStoreError {
            throw error
        } catch let error as StoredListError {
            throw PostgresStoreError("the stored rows do not form a list: \(error)")
        } catch {
            throw PostgresStoreError("reading \(settings.redacted): \(PostgresConnections.describe(error))")
        }
    }

    /// One list rebuilt from its rows, exactly as committed (nothing is parsed: see
    /// ``ListVersion/restoring(version:limits:sections:items:)``).
    private func restore(
        _ list: String, version: UInt64, limits: ListLimits, on connection: PostgresConnection
    ) throws -> ListVersion {
        let sectionRows = try connection.query(
            "SELECT id, header, footer FROM quire_section WHERE list = \(list) ORDER BY position", logger: logger
        ).wait(within: patience)
        let sections = try sectionRows.map { row in
            let (id, header, footer) = try row.decode((String, ByteBuffer?, ByteBuffer?).self)
            return StorageChanges.Section(
                id: id, header: header.map { Array($0.readableBytesView) },
                footer: footer.map { Array($0.readableBytesView) })
        }
        let itemRows = try connection.query(
            "SELECT nested, parent, id, body FROM quire_item WHERE list = \(list) ORDER BY nested, parent, position",
            logger: logger
        ).wait(within: patience)
        var items: [StorageChanges.Container: [StorageChanges.Item]] = [:]
        for row in itemRows {
            let (nested, parent, id, body) = try row.decode((Int16, String, String, ByteBuffer).self)
            let container: StorageChanges.Container = nested == 0 ? .section(parent) : .item(parent)
            items[container, default: []].append(StorageChanges.Item(id: id, body: Array(body.readableBytesView)))
        }
        do {
            return try ListVersion.restoring(version: version, limits: limits, sections: sections, items: items)
        } catch {
            throw PostgresStoreError("list \"\(list)\": \(error)")
        }
    }
}
