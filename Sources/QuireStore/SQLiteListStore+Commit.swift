import Foundation
import GRDB
public import QuireCore

extension SQLiteListStore {
    /// Stores `next` as the version of `list`: only the rows that changed since `previous`, and the version
    /// number, in a transaction shared with the writes of other lists made at the same moment (``GroupCommit``).
    /// Returns once the transaction is durable (see the type).
    ///
    /// - Throws: ``StoreError``; the transaction is rolled back then (this write and those it was grouped with),
    ///   and the file holds `previous`.
    /// - Complexity: O(*c* log *n*) for *c* changed rows, plus finding them (see
    ///   ``ListVersion/storageChanges(since:)``).
    public func commit(
        list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?
    ) throws -> Int64? {
        let changes = next.storageChanges(since: previous)
        let isNew = previous == nil
        do {
            try group.write { db in try self.write(changes, list: list, next: next, isNew: isNew, in: db) }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.write(path, error)
        }
        return nil
    }

    /// Stores `next` as the version of `list` (see ``commit(list:previous:next:write:)``).
    public func commit(list: String, previous: ListVersion?, next: ListVersion) throws {
        _ = try commit(list: list, previous: previous, at: 0, next: next, write: nil)
    }

    /// Stores new lists, all in one transaction (one sync of the file): an import, or a test's many lists. A
    /// list of one of these names that is stored already is replaced. A registry serving this store is not
    /// told: it goes on holding the lists it loaded (a listing, which reads the store, shows these at once).
    ///
    /// - Throws: ``StoreError``; nothing is stored then.
    public func create(_ lists: some Sequence<(name: String, version: ListVersion)>) throws {
        do {
            try database.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    for (name, version) in lists {
                        try self.write(
                            version.storageChanges(since: nil), list: name, next: version, isNew: true, in: db)
                    }
                    return .commit
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.write(path, error)
        }
    }

    /// Removes `list` and all its rows, in one transaction. (The registry holds the only writer of the
    /// file, so `previous` is the stored version.)
    public func delete(list: String, previous: ListVersion, at position: Int64) throws -> Int64? {
        do {
            try database.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    try self.deleteRows(of: list, in: db)
                    try db.execute(
                        sql: """
                            INSERT INTO retired (name, version) VALUES (?, ?)
                            ON CONFLICT (name) DO UPDATE SET version = max(version, excluded.version)
                            """,
                        arguments: [list, Int64(bitPattern: previous.version)])
                    return .commit
                }
            }
        } catch {
            throw StoreError.write(path, error)
        }
        return nil
    }

    /// The last version of a deleted list of this name, 0 if none (see ``ListStore/retiredVersion(of:)``).
    public func retiredVersion(of list: String) throws -> UInt64 {
        do {
            let stored = try database.read { db in
                try Int64.fetchOne(db, sql: "SELECT version FROM retired WHERE name = ?", arguments: [list])
            }
            return stored.map { UInt64(bitPattern: $0) } ?? 0
        } catch {
            throw StoreError.load(path, error)
        }
    }

    private func deleteRows(of list: String, in db: Database) throws {
        guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM list WHERE name = ?", arguments: [list]) else {
            return
        }
        try db.execute(sql: "DELETE FROM item WHERE list = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM section WHERE list = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM list WHERE id = ?", arguments: [id])
    }

    private func write(
        _ changes: StorageChanges, list: String, next: ListVersion, isNew: Bool, in db: Database
    ) throws {
        // A list the registry does not hold has no rows: clear any left by an earlier life of the name, whose
        // last version the new one went on from.
        if isNew {
            try deleteRows(of: list, in: db)
            try db.execute(sql: "DELETE FROM retired WHERE name = ?", arguments: [list])
        }
        // Cached statements: compiled once per connection, not on every write (compiling one, with GRDB's authorizer
        // called for each column it reads, cost as much as the rest of a one-item insert's statements).
        try db.cachedStatement(
            sql: """
                INSERT INTO list (name, version, sections, items) VALUES (?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE
                SET version = excluded.version, sections = excluded.sections, items = excluded.items
                """
        ).execute(arguments: [list, Int64(bitPattern: next.version), next.sectionCount, next.itemCount])
        let listID = try db.cachedStatement(sql: "SELECT id FROM list WHERE name = ?")
        guard let id = try Int64.fetchOne(listID, arguments: [list]) else {
            throw StoreError.write(path, reason: "the list row vanished")
        }
        // Old rows go first, so that new positions never meet a stale one.
        let deleteSection = try db.cachedStatement(sql: "DELETE FROM section WHERE list = ? AND id = ?")
        for section in changes.removedSections { try deleteSection.execute(arguments: [id, section]) }
        let deleteItem = try db.cachedStatement(sql: "DELETE FROM item WHERE list = ? AND id = ?")
        for item in changes.removedItems { try deleteItem.execute(arguments: [id, item]) }
        for item in changes.movedItems { try deleteItem.execute(arguments: [id, item]) }

        let sectionPosition = try db.cachedStatement(sql: "SELECT position FROM section WHERE list = ? AND id = ?")
        let placeSection = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO section (list, id, position, header, footer) VALUES (?, ?, ?, ?, ?)")
        for run in changes.placedSections {
            let low = try run.after.map { try position(of: $0, list: id, with: sectionPosition) }
            let high = try run.before.map { try position(of: $0, list: id, with: sectionPosition) }
            let positions = StoragePosition.between(low, high, count: run.sections.count)
            for (section, position) in zip(run.sections, positions) {
                try placeSection.execute(arguments: [
                    id, section.id, Data(position), section.header.map { Data($0) }, section.footer.map { Data($0) },
                ])
            }
        }
        let updateSection = try db.cachedStatement(
            sql: "UPDATE section SET header = ?, footer = ? WHERE list = ? AND id = ?")
        for section in changes.updatedSections {
            try updateSection.execute(arguments: [
                section.header.map { Data($0) }, section.footer.map { Data($0) }, id, section.id,
            ])
        }

        let itemPosition = try db.cachedStatement(sql: "SELECT position FROM item WHERE list = ? AND id = ?")
        let insertItem = try db.cachedStatement(
            sql: "INSERT INTO item (list, nested, parent, position, id, body) VALUES (?, ?, ?, ?, ?, ?)")
        for run in changes.placedItems {
            let low = try run.after.map { try position(of: $0, list: id, with: itemPosition) }
            let high = try run.before.map { try position(of: $0, list: id, with: itemPosition) }
            let positions = StoragePosition.between(low, high, count: run.items.count)
            let (nested, parent): (Int64, String) =
                switch run.container {
                case .section(let section): (0, section)
                case .item(let item): (1, item)
                }
            for (item, position) in zip(run.items, positions) {
                try insertItem.execute(arguments: [id, nested, parent, Data(position), item.id, Data(item.body)])
            }
        }
        let updateItem = try db.cachedStatement(sql: "UPDATE item SET body = ? WHERE list = ? AND id = ?")
        for item in changes.updatedItems { try updateItem.execute(arguments: [Data(item.body), id, item.id]) }
    }

    /// The stored position of a sibling that kept its place.
    private func position(of id: String, list: Int64, with statement: Statement) throws -> [UInt8] {
        guard let data = try Data.fetchOne(statement, arguments: [list, id]) else {
            throw StoreError.write(path, reason: "the stored rows of the list lack \"\(id)\"")
        }
        return [UInt8](data)
    }
}
