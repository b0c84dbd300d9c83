import GRDB
import QuireCore
import Synchronization

/// The journal of writes (the `journal` table): on a file, a commit appends one row per write and syncs; the
/// writes' rows reach their tables later, many writes of a list at once (``applyJournal(of:in:)``).
///
/// Why: a write's rows are spread over the file (an item's row sits in its list's part of the `item` B-tree), so a
/// commit of writes to many lists would write pages of each into the WAL and have the sync submit them all. The
/// journal's rows are appended where the last ones ended: a commit writes a page or two, and a list's pages are
/// written once for all its writes since it was last applied rather than once a commit (docs/performance.md,
/// "Writes").
///
/// What it keeps:
/// - An acknowledged write is durable in the journal, or in the tables, or both; the journal's rows of a list are
///   applied in order, and an entry whose version the list has reached already (its row's, or its deleted life's
///   in `retired`) is skipped, so applying is idempotent (a crash between applying and deleting, or another process
///   that opened the file, applies nothing twice). A list's row and its rows change in one transaction.
/// - Rows are deleted from the journal only below the oldest entry not applied (``Journal/lowWater(after:)``).
/// - Whatever reads a list's rows applies that list's entries first (``readApplied(for:_:)``); a listing reads the
///   versions and sizes of the entries held in memory instead, so that it never writes (a full disk still lists).
extension SQLiteListStore {
    /// Entries held after which a commit applies the oldest lists' entries, by default (``journalLimit``): enough
    /// that a list's pages are written once for many of its writes under a load spread over thousands of lists, few
    /// enough that the entries held in memory stay small (a few MB).
    public static let defaultJournalLimit = 16_384

    /// The largest entry journaled: a write whose entry would be larger is written into the tables at once.
    static let journaledBytes = 16 << 10

    /// Rows a write may change and still be journaled: a larger one (a list replaced, an import) gains nothing from
    /// the journal, whose entry would hold all its rows once more, and is written into the tables at once.
    static let journaledRows = 64

    /// Makes one write of a commit, in its transaction: appends it to the journal (held by ``Journal`` once the
    /// transaction commits), or, for a write of more than ``journaledRows`` rows or ``journaledBytes`` (or every
    /// write when ``journalLimit`` is 0), writes its rows after applying the list's entries before it.
    func journal(
        _ changes: StorageChanges, list: String, next: ListVersion, isNew: Bool, in db: Database
    ) throws {
        let entry = journalLimit > 0 && changes.rowCount <= Self.journaledRows ? changes.encoded() : nil
        guard let encoded = entry, encoded.count <= Self.journaledBytes else {
            let earlier = journalEntries.entries(of: list, staged: true)
            if !earlier.isEmpty {
                try apply(earlier, of: list, in: db)
                journalEntries.stageApplied(list, through: earlier[earlier.count - 1].seq)
            }
            try write(changes, list: list, next: next, isNew: isNew, in: db)
            return
        }
        let insert = try RawStatement(
            db, "INSERT INTO journal (list, version, sections, items, new, changes) VALUES (?, ?, ?, ?, ?, ?)")
        let version = Int64(bitPattern: next.version)
        insert.bind(1, list)
        insert.bind(2, version)
        insert.bind(3, next.sectionCount)
        insert.bind(4, next.itemCount)
        insert.bind(5, isNew ? 1 : 0)
        insert.bind(6, blob: encoded)
        try insert.run()
        journalEntries.stage(
            Journal.Entry(
                seq: db.lastInsertedRowID, list: list, version: version, sections: next.sectionCount,
                items: next.itemCount, isNew: isNew, changes: changes, bytes: encoded.count))
    }

    /// Applies the entries of `lists` (each list's, in order) to the tables, and deletes the journal's rows below
    /// the oldest entry still held: one transaction.
    ///
    /// The transaction is not synced by itself (`synchronous = NORMAL` for it): the WAL keeps transactions in
    /// order, so a crash loses it only with everything after it, the entries it applied still in the journal, and
    /// the next commit's sync makes it durable.
    ///
    /// - Throws: the error of the transaction, which rolled back; every entry stays held.
    func applyJournal(of lists: [String: [Journal.Entry]], in db: Database) throws {
        guard !lists.isEmpty else { return }
        let lowWater = journalEntries.lowWater(after: lists)
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
        do {
            defer {
                // Every commit after this one must sync again; a connection that cannot be set back is of no use.
                do { try db.execute(sql: "PRAGMA synchronous = FULL") } catch {
                    fatalError("cannot set synchronous = FULL: \(error)")
                }
            }
            try RawStatement.transaction(db) {
                for (list, entries) in lists { try apply(entries, of: list, in: db) }
                if let lowWater {
                    let delete = try RawStatement(db, "DELETE FROM journal WHERE seq < ?")
                    delete.bind(1, lowWater)
                    try delete.run()
                } else {
                    try RawStatement(db, "DELETE FROM journal").run()
                }
            }
        } catch {
            listIDs.withLock { $0.removeAll() }
            throw error
        }
        journalEntries.remove(lists)
    }

    /// Writes `entries` of `list` into the tables, in the caller's transaction, but those whose version the list has
    /// reached: its row's, or the last of its deleted life (`retired`; a deleted list's entries are obsolete, and
    /// versions of a name only grow, across its lives).
    private func apply(_ entries: [Journal.Entry], of list: String, in db: Database) throws {
        let stored = try RawStatement(db, "SELECT version FROM list WHERE name = ?")
        stored.bind(1, list)
        let retired = try RawStatement(db, "SELECT version FROM retired WHERE name = ?")
        retired.bind(1, list)
        let reached = max(try stored.firstInteger() ?? 0, try retired.firstInteger() ?? 0)
        for entry in entries where entry.version > reached {
            try write(
                entry.changes, list: list, version: entry.version, sections: entry.sections, items: entry.items,
                isNew: entry.isNew, in: db)
        }
    }

    /// After a commit, whose writes are durable already: applies the oldest lists' entries while the journal is due
    /// (``Journal/isDue``: ``journalLimit`` entries, or the bytes of ``Journal/Limits``).
    func applyJournalIfDue() {
        // A chunk at a time, until below the limits again (a batch may have added more than a chunk). A failure
        // leaves every entry held: the next commit tries again, and a read that needs the entries applies them
        // itself and reports the error.
        while journalEntries.isDue {
            let applied = try? database.writeWithoutTransaction { db in
                let lists = journalEntries.oldest()
                try applyJournal(of: lists, in: db)
                return !lists.isEmpty
            }
            guard applied == true else { return }
        }
    }

    /// `body` on the tables as of the last commit, in a read transaction: after applying the entries of `list`
    /// (`nil`: of every list), when the journal holds any.
    func readApplied<Value>(for list: String?, _ body: (Database) throws -> Value) throws -> Value {
        guard journalEntries.holds(list) else { return try database.read(body) }
        return try database.writeWithoutTransaction { db in
            // Taken again now that no commit can come between.
            try applyJournal(of: journalEntries.entries(of: list), in: db)
            var value: Value?
            try db.inTransaction(.deferred) {
                value = try body(db)
                return .commit
            }
            return value!
        }
    }

    /// Reads the journal a process left (at opening): its entries not applied yet are held, then applied.
    ///
    /// - Throws: ``StoreError`` when an entry cannot be read (a damaged file). A failure to apply them (a full
    ///   disk) is not one: they stay held, and each list's are applied when it is read.
    func recoverJournal() throws {
        var entries: [Journal.Entry] = []
        try database.read { db in
            let select = try RawStatement(
                db, "SELECT seq, list, version, sections, items, new, changes FROM journal ORDER BY seq")
            try select.forEachRow { row in
                let seq = row.integer(0)
                let list = row.text(1)
                let encoded = row.bytes(6)
                let changes: StorageChanges
                do {
                    changes = try StorageChanges(encoded: encoded)
                } catch {
                    throw StoreError.open(path, reason: "journal entry \(seq) of list \"\(list)\": \(error)")
                }
                entries.append(
                    Journal.Entry(
                        seq: seq, list: list, version: row.integer(2), sections: Int(row.integer(3)),
                        items: Int(row.integer(4)), isNew: row.integer(5) != 0, changes: changes,
                        bytes: encoded.count))
            }
        }
        guard !entries.isEmpty else { return }
        journalEntries.hold(entries)
        try? database.writeWithoutTransaction { db in
            try applyJournal(of: journalEntries.entries(of: nil), in: db)
        }
    }
}
