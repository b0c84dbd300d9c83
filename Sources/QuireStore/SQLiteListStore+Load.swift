import Foundation
import GRDB
internal import GRDBSQLite
public import QuireCore

extension SQLiteListStore {
    /// One stored list at its stored version, rebuilt exactly as it was committed, or `nil` when the file holds
    /// no list of that name (one lookup in the index on names). The log position is always 0 (no log).
    ///
    /// The list's sections are one range of the `section` table's primary key and its items one range of the
    /// `item` table's, sorted by container and position: each item's stored JSON bytes become its node as they
    /// are, nothing parsed.
    ///
    /// - Throws: ``StoreError`` when the file cannot be read or the list's rows do not form a list.
    /// - Complexity: O(*n* log *n*) for the list's *n* items, plus one index lookup.
    public func load(list name: String, limits: ListLimits) throws -> (version: ListVersion?, position: Int64) {
        do {
            return try readApplied(for: name) { db in
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT id, version FROM list WHERE name = ?", arguments: [name])
                else { return (nil, 0) }
                return (try restore(name, row: row, limits: limits, in: db), 0)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.load(path, error)
        }
    }

    /// Every stored list at its stored version (tools and tests: the service loads lists one at a time, when
    /// they are first needed).
    ///
    /// - Throws: ``StoreError`` when the file cannot be read or its rows do not form lists.
    /// - Complexity: O(*n* log *n*) for *n* stored items.
    public func loadAll(limits: ListLimits) throws -> [String: ListVersion] {
        do {
            return try readApplied(for: nil) { db in
                var lists: [String: ListVersion] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT id, name, version FROM list") {
                    let name: String = row["name"]
                    lists[name] = try restore(name, row: row, limits: limits, in: db)
                }
                return lists
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.load(path, error)
        }
    }

    /// The list of a `list` row (its `id` and `version`), from its sections and items.
    private func restore(_ name: String, row: Row, limits: ListLimits, in db: Database) throws -> ListVersion {
        let id: Int64 = row["id"]
        let version: Int64 = row["version"]
        do {
            return try ListVersion.restoring(
                version: UInt64(bitPattern: version), limits: limits,
                sections: try Self.sections(of: id, in: db), items: try Self.items(of: id, in: db))
        } catch let error as StoredListError {
            throw StoreError.load(path, reason: "list \"\(name)\": \(error)")
        }
    }

    /// The sections of a list, in order.
    private static func sections(of list: Int64, in db: Database) throws -> [StorageChanges.Section] {
        let rows = try Row.fetchAll(
            db, sql: "SELECT id, position, header, footer FROM section WHERE list = ?", arguments: [list])
        let sections = rows.map { row -> (position: [UInt8], section: StorageChanges.Section) in
            let header: Data? = row["header"]
            let footer: Data? = row["footer"]
            let position: Data = row["position"]
            return (
                [UInt8](position),
                StorageChanges.Section(
                    id: row["id"], header: header.map { [UInt8]($0) }, footer: footer.map { [UInt8]($0) })
            )
        }
        return sections.sorted { $0.position.lexicographicallyPrecedes($1.position) }.map(\.section)
    }

    /// The items of a list by container, each container's in order: one range of the primary key, sorted by
    /// SQLite, read through its C interface (what a load costs: docs/performance.md, "The store").
    private static func items(of list: Int64, in db: Database) throws
        -> [StorageChanges.Container: [StorageChanges.Item]]
    {
        let statement = try db.makeStatement(
            sql: "SELECT nested, parent, id, body FROM item WHERE list = ? ORDER BY nested, parent, position")
        try statement.setArguments([list])
        let handle = statement.sqliteStatement
        var result: [StorageChanges.Container: [StorageChanges.Item]] = [:]
        var parentBytes: [UInt8] = []
        var nested: Int64 = -1
        var container: StorageChanges.Container?
        var items: [StorageChanges.Item] = []
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code),
                    message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            let row = RawStatement.Columns(handle)
            let rowNested = row.integer(0)
            let parent = row.bytes(1)
            if container == nil || rowNested != nested || !parent.elementsEqual(parentBytes) {
                if let container { result[container] = items }
                nested = rowNested
                parentBytes = Array(parent)
                let name = String(decoding: parentBytes, as: UTF8.self)
                container = rowNested == 0 ? .section(name) : .item(name)
                items = []
            }
            items.append(StorageChanges.Item(id: row.text(2), body: Array(row.bytes(3))))
        }
        if let container { result[container] = items }
        return result
    }
}
