import Foundation
import GRDB
public import QuireCore
import Synchronization

extension SQLiteListStore {
    /// Stores `next` as the version of `list`: only the rows that changed since `previous`, and the version
    /// number (on a file, as an entry of the journal of writes when the change is small, ``journal(_:list:next:isNew:in:)``),
    /// in a transaction shared with the writes of other lists made at the same moment (``GroupCommit``). Returns once
    /// the transaction is durable (see the type).
    ///
    /// - Throws: ``StoreError``; the transaction is rolled back then (this write and those it was grouped with),
    ///   and the file holds `previous`.
    /// - Complexity: O(*c* log *n*) for *c* changed rows, plus finding them (see
    ///   ``ListVersion/storageChanges(since:keepsLabels:)``).
    public func commit(
        list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?
    ) throws -> Int64? {
        let changes = next.storageChanges(since: previous, keepsLabels: write?.keepsLabels ?? false)
        let isNew = previous == nil
        do {
            if answersAtOnce {
                // Nothing to wait for in company: no file is synced.
                try database.writeWithoutTransaction { db in
                    try RawStatement.transaction(db) {
                        try self.write(changes, list: list, next: next, isNew: isNew, in: db)
                    }
                }
            } else {
                try group.write { db in try self.journal(changes, list: list, next: next, isNew: isNew, in: db) }
            }
        } catch {
            throw failedWrite(error)
        }
        if !answersAtOnce { applyJournalIfDue() }
        return nil
    }

    /// `true`: ``commit(together:)`` writes its commits in one transaction.
    public var commitsTogether: Bool { true }

    /// Stores every commit of `commits` in order, in one transaction and one sync of the file (see
    /// ``ListStore/commit(together:)``): the registry's batches of writes made by one thread.
    ///
    /// - Throws: ``StoreError``; the transaction is rolled back then, and the file holds none of them.
    public func commit(together commits: [ListCommit]) throws {
        do {
            try group.together(listWorks(commits))
        } catch {
            throw failedWrite(error)
        }
        if !answersAtOnce { applyJournalIfDue() }
    }

    /// The work of each commit of `commits` in a transaction: its rows written (in memory) or journaled (a file).
    func listWorks(_ commits: [ListCommit]) -> [@Sendable (Database) throws -> Void] {
        commits.map { commit in
            let changes =
                commit.changes
                ?? commit.next.storageChanges(since: commit.previous, keepsLabels: commit.write?.keepsLabels ?? false)
            let (list, next, isNew) = (commit.list, commit.next, commit.previous == nil)
            if answersAtOnce {
                return { @Sendable (db: Database) throws in
                    try self.write(changes, list: list, next: next, isNew: isNew, in: db)
                }
            }
            return { @Sendable (db: Database) throws in
                try self.journal(changes, list: list, next: next, isNew: isNew, in: db)
            }
        }
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
                // The journal is applied and emptied first: its rows of these names would be applied on top of them
                // at the next opening (a list created here may have a lower version than a journaled write had).
                try applyJournal(of: journalEntries.entries(of: nil), in: db)
                try RawStatement.transaction(db) {
                    try RawStatement(db, "DELETE FROM journal").run()
                    for (name, version) in lists {
                        try self.write(
                            version.storageChanges(since: nil), list: name, next: version, isNew: true, in: db)
                    }
                }
            }
        } catch {
            throw failedWrite(error)
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
                journalEntries.drop([list])
            }
        } catch {
            throw StoreError.write(path, error)
        }
        return nil
    }

    /// The last version of a deleted list of this name, 0 if none (see ``ListStore/retiredVersion(of:)``).
    public func retiredVersion(of list: String) throws -> UInt64 {
        do {
            let stored = try readApplied(for: list) { db in
                try Int64.fetchOne(db, sql: "SELECT version FROM retired WHERE name = ?", arguments: [list])
            }
            return stored.map { UInt64(bitPattern: $0) } ?? 0
        } catch {
            throw StoreError.load(path, error)
        }
    }

    /// The error of a write whose transaction rolled back, after forgetting the row ids it may have remembered
    /// for lists it created (not stored after all).
    func failedWrite(_ error: any Error) -> StoreError {
        listIDs.withLock { $0.removeAll() }
        return error as? StoreError ?? StoreError.write(path, error)
    }

    private func deleteRows(of list: String, in db: Database) throws {
        listIDs.withLock { $0[list] = nil }
        guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM list WHERE name = ?", arguments: [list]) else {
            return
        }
        try db.execute(sql: "DELETE FROM item WHERE list = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM section WHERE list = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM list WHERE id = ?", arguments: [id])
    }

    func write(
        _ changes: StorageChanges, list: String, next: ListVersion, isNew: Bool, in db: Database
    ) throws {
        try write(
            changes, list: list, version: Int64(bitPattern: next.version), sections: next.sectionCount,
            items: next.itemCount, isNew: isNew, in: db)
    }

    /// Writes a list's changed rows and its row (`version` and sizes), in the caller's transaction: a commit's
    /// on `:memory:`, the journal's application on a file (``applyJournal(of:in:)``).
    func write(
        _ changes: StorageChanges, list: String, version: Int64, sections: Int, items: Int, isNew: Bool,
        in db: Database
    ) throws {
        let id: Int64
        if isNew {
            // A list the registry does not hold has no rows: clear any left by an earlier life of the name, whose
            // last version the new one went on from.
            try deleteRows(of: list, in: db)
            try db.execute(sql: "DELETE FROM retired WHERE name = ?", arguments: [list])
            let insert = try RawStatement(db, "INSERT INTO list (name, version, sections, items) VALUES (?, ?, ?, ?)")
            insert.bind(1, list)
            insert.bind(2, version)
            insert.bind(3, sections)
            insert.bind(4, items)
            try insert.run()
            id = db.lastInsertedRowID
        } else {
            guard let known = try listID(of: list, in: db) else {
                throw StoreError.write(path, reason: "the list row vanished")
            }
            id = known
            let update = try RawStatement(db, "UPDATE list SET version = ?, sections = ?, items = ? WHERE id = ?")
            update.bind(1, version)
            update.bind(2, sections)
            update.bind(3, items)
            update.bind(4, id)
            try update.run()
            guard db.changesCount == 1 else { throw StoreError.write(path, reason: "the list row vanished") }
        }
        listIDs.withLock { ids in
            if ids.count >= Self.listIDLimit, ids[list] == nil { ids.removeAll(keepingCapacity: true) }
            ids[list] = id
        }

        // Old rows go first, so that new positions never meet a stale one. Each statement is looked up only when the
        // write has rows for it: a lookup in GRDB's cache hashes the statement's text, and an insert needs three of
        // the nine.
        if !changes.removedSections.isEmpty {
            let deleteSection = try RawStatement(db, "DELETE FROM section WHERE list = ? AND id = ?")
            for section in changes.removedSections {
                deleteSection.bind(1, id)
                deleteSection.bind(2, section)
                try deleteSection.run()
            }
        }
        if !changes.removedItems.isEmpty || !changes.movedItems.isEmpty {
            let deleteItem = try RawStatement(db, "DELETE FROM item WHERE list = ? AND id = ?")
            for items in [changes.removedItems, changes.movedItems] {
                for item in items {
                    deleteItem.bind(1, id)
                    deleteItem.bind(2, item)
                    try deleteItem.run()
                }
            }
        }

        if !changes.placedSections.isEmpty {
            try placeSections(changes.placedSections, list: id, in: db)
        }
        if !changes.updatedSections.isEmpty {
            let updateSection = try RawStatement(
                db, "UPDATE section SET header = ?, footer = ? WHERE list = ? AND id = ?")
            for section in changes.updatedSections {
                updateSection.bind(1, blob: section.header)
                updateSection.bind(2, blob: section.footer)
                updateSection.bind(3, id)
                updateSection.bind(4, section.id)
                try updateSection.run()
            }
        }
        if !changes.placedItems.isEmpty {
            try placeItems(changes.placedItems, list: id, in: db)
        }
        if !changes.updatedItems.isEmpty {
            let updateItem = try RawStatement(db, "UPDATE item SET body = ? WHERE list = ? AND id = ?")
            for item in changes.updatedItems {
                updateItem.bind(1, blob: item.body)
                updateItem.bind(2, id)
                updateItem.bind(3, item.id)
                try updateItem.run()
            }
        }
    }

    /// Writes the rows of sections placed (new or moved), each run between the stored positions of its anchors.
    private func placeSections(_ runs: [StorageChanges.SectionRun], list id: Int64, in db: Database) throws {
        let sectionPosition = try RawStatement(db, "SELECT position FROM section WHERE list = ? AND id = ?")
        let placeSection = try RawStatement(
            db, "INSERT OR REPLACE INTO section (list, id, position, header, footer) VALUES (?, ?, ?, ?, ?)")
        for run in runs {
            let low = try run.after.map { try position(of: $0, list: id, with: sectionPosition) }
            let high = try run.before.map { try position(of: $0, list: id, with: sectionPosition) }
            let positions = StoragePosition.between(low, high, count: run.sections.count)
            for (section, position) in zip(run.sections, positions) {
                placeSection.bind(1, id)
                placeSection.bind(2, section.id)
                placeSection.bind(3, blob: position)
                placeSection.bind(4, blob: section.header)
                placeSection.bind(5, blob: section.footer)
                try placeSection.run()
            }
        }
    }

    /// Writes the rows of items placed (new or moved), each run between the stored positions of its anchors.
    private func placeItems(_ runs: [StorageChanges.ItemRun], list id: Int64, in db: Database) throws {
        let itemPosition = try RawStatement(db, "SELECT position FROM item WHERE list = ? AND id = ?")
        let insertItem = try RawStatement(
            db, "INSERT INTO item (list, nested, parent, position, id, body) VALUES (?, ?, ?, ?, ?, ?)")
        for run in runs {
            let low = try run.after.map { try position(of: $0, list: id, with: itemPosition) }
            let high = try run.before.map { try position(of: $0, list: id, with: itemPosition) }
            let positions = StoragePosition.between(low, high, count: run.items.count)
            let (nested, parent): (Int64, String) =
                switch run.container {
                case .section(let section): (0, section)
                case .item(let item): (1, item)
                }
            for (item, position) in zip(run.items, positions) {
                insertItem.bind(1, id)
                insertItem.bind(2, nested)
                insertItem.bind(3, parent)
                insertItem.bind(4, blob: position)
                insertItem.bind(5, item.id)
                insertItem.bind(6, blob: item.body)
                try insertItem.run()
            }
        }
    }

    /// The row id of `list`: remembered from its last write (a list's row keeps its id until it is deleted), else
    /// read.
    private func listID(of list: String, in db: Database) throws -> Int64? {
        if let id = listIDs.withLock({ $0[list] }) { return id }
        let select = try RawStatement(db, "SELECT id FROM list WHERE name = ?")
        select.bind(1, list)
        return try select.firstInteger()
    }

    /// The stored position of a sibling that kept its place.
    private func position(of id: String, list: Int64, with statement: RawStatement) throws -> [UInt8] {
        statement.bind(1, list)
        statement.bind(2, id)
        guard let position = try statement.firstBlob() else {
            throw StoreError.write(path, reason: "the stored rows of the list lack \"\(id)\"")
        }
        return position
    }
}
