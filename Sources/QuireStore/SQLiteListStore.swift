import Foundation
import GRDB
public import QuireCore
import Synchronization

/// The embedded store: every list in one SQLite file, through GRDB.
///
/// Durability: the file is in WAL mode with `synchronous = FULL`. A commit returns only after its WAL
/// frames are written and `fsync`ed, so every write the registry acknowledges survives a crash of the
/// process, of the machine and a power cut. (`NORMAL`, GRDB's and SQLite's usual WAL choice, syncs only at
/// checkpoints: it keeps the file consistent but may lose the last acknowledged writes on a power cut, which
/// the API's contract does not allow.) A transaction that did not commit leaves nothing behind: SQLite
/// ignores WAL frames that no commit record closes.
///
/// A write stores only what changed (``ListVersion/storageChanges(since:keepsLabels:)``): one item written into a
/// list of 100,000 writes one row, plus the list's version. On a file, a small write is first appended to the
/// journal of writes, and its rows reach their tables later, with the list's other writes since (see
/// ``applyJournal(of:in:)``): a commit writes a page or two of the journal rather than a page of every list it
/// touches. The application of the journal is not synced by itself (`NORMAL`, for that transaction alone): the WAL
/// keeps it in order before the next commit, whose sync makes it durable, and the journal's entries it applied stay
/// until it is.
public final class SQLiteListStore: ListStore {
    /// The path that keeps everything in memory (tests that need no file).
    public static let inMemoryPath = ":memory:"

    /// The database file, or `:memory:`.
    public let path: String
    let database: DatabaseQueue
    /// Where commits wait for each other's company (``GroupCommit``).
    let group: GroupCommit
    /// The row ids of lists written lately, so that a write updates its list's row by id (an id missing here is
    /// read). At most ``listIDLimit``: the store may hold far more lists than are written.
    let listIDs = Mutex<[String: Int64]>([:])
    static let listIDLimit = 65_536
    /// The journal's entries not applied yet (see ``applyJournal(of:in:)``); none for `:memory:`, which writes its
    /// tables at once.
    let journalEntries: Journal
    /// Writes held in the journal after which a commit applies the oldest lists' (``defaultJournalLimit``); 0: no
    /// write is journaled.
    public let journalLimit: Int

    /// `true` for `:memory:`: a commit writes no file and waits on nothing but the CPU work of its batch (see
    /// ``ListStore/answersAtOnce``).
    public var answersAtOnce: Bool { path == Self.inMemoryPath }

    /// `true` for a file: a commit waits on its sync, on this machine's disk (see ``ListStore/syncsLocally``).
    public var syncsLocally: Bool { path != Self.inMemoryPath }

    /// Opens (or creates) the database at `path` and brings its schema up to date.
    ///
    /// A missing folder is created. An existing file is never overwritten: one that cannot be read, is not
    /// a SQLite database, or holds a schema from a newer Quire makes this throw, and stays as it was.
    ///
    /// `journalLimit`: see ``journalLimit``.
    ///
    /// - Throws: ``StoreError``, whose description names the file and the cause.
    public init(path: String, journalLimit: Int = defaultJournalLimit) throws(StoreError) {
        self.path = path
        self.journalLimit = max(0, journalLimit)
        do {
            if path == Self.inMemoryPath {
                database = try DatabaseQueue(configuration: Self.configuration)
            } else {
                let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                database = try DatabaseQueue(path: path, configuration: Self.configuration)
            }
            let journal = Journal(limits: Journal.Limits(entries: self.journalLimit))
            journalEntries = journal
            group = GroupCommit(database) { committed in journal.settle(committed: committed) }
            // Only reads until the schema is known to need an upgrade: a damaged file is never written to.
            let migrator = Self.migrator
            let (superseded, completed, applied) = try database.read { db in
                (
                    try migrator.hasBeenSuperseded(db), try migrator.hasCompletedMigrations(db),
                    try migrator.appliedIdentifiers(db)
                )
            }
            if superseded {
                throw StoreError.open(path, reason: "its schema is from a newer version of quire")
            }
            if !completed {
                try database.read { db in try Self.checkIntegrity(db) }
                try migrator.migrate(database)
                if applied.contains(Self.firstMigration), !applied.contains(Self.itemsKeyedByID) {
                    try Self.compact(database)
                }
            }
            // Writes the last process acknowledged and did not apply to the tables.
            try recoverJournal()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.open(path, error)
        }
    }

    /// After the `item` table of an earlier file was copied into its new form (``itemsKeyedByID``): the old
    /// table's pages, free now, are given back (`VACUUM`), and the WAL, which the copy grew by the table's size,
    /// is emptied, so that the file does not stay twice its size.
    private static func compact(_ database: DatabaseQueue) throws {
        try database.vacuum()
        _ = try database.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    }

    /// Refuses a file that SQLite finds damaged (`quick_check`), before a migration writes to it.
    private static func checkIntegrity(_ db: Database) throws {
        let result = try String.fetchOne(db, sql: "PRAGMA quick_check")
        guard result == "ok" else { throw StoreError.open(db.description, reason: "damaged: \(result ?? "?")") }
    }

    /// WAL pages after which a commit copies the WAL into the file (SQLite's `wal_autocheckpoint`; its default is
    /// 1,000). A checkpoint runs inside the commit that crosses this, on the writer's thread, and syncs the file
    /// twice; fewer of them, each copying the pages that many writes touch (the lists' rows, the B-trees' upper
    /// levels) once for many more writes, let the writer commit more writes in the same time under many producers
    /// (docs/performance.md, "Writes"). The WAL then reaches about 40 MB (as many 4 KiB pages), and is written over
    /// from its start.
    static let checkpointPages = 10_000

    /// WAL, `synchronous = FULL` (see the type's documentation), a checkpoint every ``checkpointPages`` pages,
    /// foreign keys off (the store keeps its rows consistent itself), and a wait of up to 10 s for a lock held by
    /// another process (a backup).
    static var configuration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "quire.store"
        configuration.prepareDatabase { db in
            // Not GRDB's `journalMode = .wal`: it writes a dummy table into the file at every opening,
            // and a file that turns out to be damaged must not be written to.
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            guard mode == "wal" || mode == "memory" else {
                throw StoreError.open(db.description, reason: "cannot use WAL mode (journal mode \(mode ?? "?"))")
            }
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(checkpointPages)")
        }
        return configuration
    }

    /// Caps the file at `pages` pages (SQLite's `max_page_count`; a page is 4,096 bytes): a write that
    /// would grow it further fails as on a full disk, and keeps nothing. For quotas, and for tests of
    /// what a full disk does.
    public func setMaximumPageCount(_ pages: Int) throws(StoreError) {
        do {
            try database.writeWithoutTransaction { db in
                _ = try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(pages)")
            }
        } catch {
            throw StoreError.write(path, error)
        }
    }

    /// Closes the database: later calls fail. (Dropping the last reference closes it too.)
    public func close() throws {
        try database.close()
    }

    /// SQLite's `synchronous` setting in force (2 is `FULL`), for tests.
    public func synchronousMode() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    /// The WAL pages after which a commit checkpoints (SQLite's `wal_autocheckpoint`), for tests.
    public func checkpointThreshold() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? -1 }
    }

    /// The journal mode in force (`wal` for a file).
    public func journalMode() throws -> String {
        try database.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "" }
    }

    /// The number of pages the file holds now.
    public func pageCount() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
    }

    /// Rows stored for `list`, sections and items (for tests and diagnostics).
    public func rowCounts(of list: String) throws -> (sections: Int, items: Int) {
        try readApplied(for: list) { db in
            let id = try Int64.fetchOne(db, sql: "SELECT id FROM list WHERE name = ?", arguments: [list])
            guard let id else { return (0, 0) }
            let sections = try Int.fetchOne(db, sql: "SELECT count(*) FROM section WHERE list = ?", arguments: [id])
            let items = try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE list = ?", arguments: [id])
            return (sections ?? 0, items ?? 0)
        }
    }

    /// Transactions that committed list writes since the store was opened, and the writes they held: with writers
    /// at once, fewer transactions than writes (``GroupCommit``).
    public var groupCommitCounts: (commits: Int, writes: Int) { group.counts }

    /// Writes acknowledged and held in the journal, not yet applied to the tables (see ``applyJournal(of:in:)``):
    /// for tests and diagnostics.
    public var journaledWrites: Int { journalEntries.count }

    /// The journal's entries not yet applied: what `/metrics` shows as the journal's backlog.
    public var backlog: StoreBacklog? { journalEntries.held }

    /// The total number of changes (rows inserted, updated or deleted) since the store was opened,
    /// SQLite's `total_changes()`: tests use it to check that small writes write little.
    public func totalChanges() throws -> Int {
        try database.read { db in db.totalChangesCount }
    }
}
