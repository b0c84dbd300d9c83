import Foundation
public import Logging
import NIOCore
import PostgresNIO
public import QuireCore
import Synchronization

/// The shared store: lists in PostgreSQL, for several Quire instances at once (architecture.md, "When one
/// machine is not enough"), through postgres-nio.
///
/// - **Rows** as in the SQLite store: one per section and per item, with position keys that sort as the
///   list does (``StoragePosition``), so a write stores only what changed and a start loads every list.
/// - **Conditional commits**: a commit locks its list's row (`SELECT … FOR UPDATE`) and goes on only if
///   the stored version is the one the write was built on; otherwise it throws ``StoreConflict`` and the
///   registry replays the other instance's changes and builds the write again. Two instances can never
///   both commit version *n* of a list. The locks, the check and the writes are one call of a function of
///   the schema (``commitFunction``), most often outside any transaction: a write is one or two statements.
/// - **The log**: every commit records the write itself (``ListWrite``) at a position taken from a sequence
///   (`quire_log_position`) once the list is locked, so that one list's positions grow in its commit order;
///   another instance replays the write on the version it holds instead of reloading the list. Positions of
///   different lists are not ordered: nothing is shared between writes to different lists but the sequence,
///   whose `nextval` holds no lock, so commits to different lists never wait for each other's flush.
/// - **Notifications after the commit**: ``PostgresNotifier`` tells the other instances which lists changed
///   (`NOTIFY quire_changes`, in a transaction of its own that does not wait for a flush: `NOTIFY` takes a
///   cluster-wide lock until its transaction ends). ``PostgresChangeFeed`` listens, reads the log of each list it
///   holds after the position it holds it at, and compares every list it holds with the store after every
///   reconnection and every 2 s, since notifications are not durable.
/// - **Retention**: the log keeps about the last ``PostgresSettings/logRetention`` changes; a list whose
///   changes it no longer has is read again whole.
///
/// Durability is PostgreSQL's: a commit returns once the server has flushed it (`synchronous_commit`).
public final class PostgresListStore: ListStore {
    let connections: PostgresConnections
    let logger: Logger
    /// Transactions left open by a conflict, by list: they hold the list's row lock until the registry
    /// writes again (``commit(list:previous:next:write:)``) or gives up (``endWrite(list:)``). The registry
    /// holds the list's own lock meanwhile, so one thread at a time uses each.
    let heldLocks = Mutex<[String: PostgresConnection]>([:])
    /// Stored positions of rows each list's last commit here placed, so that the next write there needs no read.
    let knownPositions = Mutex<[String: KnownPositions]>([:])
    /// Tells the other instances of each commit, once it is made.
    let notifier: PostgresNotifier
    /// What this store's notifications carry first: its change feed passes over them.
    public var origin: String { notifier.origin }
    public var settings: PostgresSettings { connections.settings }
    /// The longest any wait for PostgreSQL lasts (``PostgresConnections/patience``).
    var patience: Double { connections.patience }

    /// Connects and creates the tables when they do not exist (several instances may start at once: the
    /// creation runs under an advisory lock).
    ///
    /// - Throws: ``PostgresStoreError`` naming the server (never the password) and the cause.
    public init(settings: PostgresSettings, logger: Logger) throws(PostgresStoreError) {
        connections = PostgresConnections(settings: settings, logger: logger)
        notifier = PostgresNotifier(connections: connections, logger: logger)
        self.logger = logger
        do {
            try connections.with { connection in
                try Self.run(
                    Self.schema, on: connection, logger: logger, patience: settings.statementTimeoutSeconds + 2)
            }
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw PostgresStoreError(
                "cannot prepare the tables in \(settings.redacted): \(PostgresConnections.describe(error))")
        }
    }

    /// Closes the store's connections.
    public func close() {
        notifier.stop()
        connections.close()
    }

    /// The schema. Tables are created if missing; a table, once released, only grows columns.
    static let schema: [PostgresQuery] = [
        "BEGIN",
        "SELECT pg_advisory_xact_lock(7741)",
        """
        CREATE TABLE IF NOT EXISTS quire_list (
            name text PRIMARY KEY,
            version bigint NOT NULL,
            position bigint NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS quire_section (
            list text NOT NULL,
            id text NOT NULL,
            position bytea NOT NULL,
            header bytea,
            footer bytea,
            PRIMARY KEY (list, id))
        """,
        """
        CREATE TABLE IF NOT EXISTS quire_item (
            list text NOT NULL,
            nested smallint NOT NULL,
            parent text NOT NULL,
            position bytea NOT NULL,
            id text NOT NULL,
            body bytea NOT NULL,
            PRIMARY KEY (list, nested, parent, position))
        """,
        "CREATE UNIQUE INDEX IF NOT EXISTS quire_item_by_id ON quire_item (list, id)",
        """
        CREATE TABLE IF NOT EXISTS quire_log (
            position bigint PRIMARY KEY,
            list text NOT NULL,
            version bigint NOT NULL,
            kind text NOT NULL,
            body bytea,
            committed_at double precision NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS quire_log_by_list ON quire_log (list, position)",
        // The log's positions. A store of the release that ordered every commit by one counter row (`quire_feed`)
        // goes on after its last position, and the counter is dropped: an instance of that release still running
        // fails its writes (503) instead of logging positions this sequence gives too.
        """
        DO $$ BEGIN
            IF to_regclass('quire_log_position') IS NULL THEN
                CREATE SEQUENCE quire_log_position;
                PERFORM setval('quire_log_position', greatest(
                    (SELECT coalesce(max(position), 0) FROM quire_log),
                    (SELECT coalesce(max(position), 0) FROM quire_list)) + 1, false);
            END IF;
            IF to_regclass('quire_feed') IS NOT NULL THEN
                PERFORM setval('quire_log_position', greatest(
                    (SELECT last_value FROM quire_log_position), (SELECT max(position) + 1 FROM quire_feed)), false);
                DROP TABLE quire_feed;
            END IF;
        END $$
        """,
        // The last version of each deleted list, until its name is created again (ListStore.retiredVersion).
        """
        CREATE TABLE IF NOT EXISTS quire_retired (
            name text PRIMARY KEY,
            version bigint NOT NULL)
        """,
        // Listings (ListStore.summaries): each list's sizes, as of the version `sized_version` (every commit
        // writes the three with the version; a row an earlier release wrote has none, or older ones, and is
        // counted from its rows when listed), and the names in byte order (`COLLATE "C"`, whatever the
        // database's collation). Added only when missing: ALTER TABLE and CREATE INDEX lock the table even when
        // there is nothing to do, and other instances are using it.
        """
        DO $$ BEGIN
            IF NOT EXISTS (
                SELECT 1 FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = 'quire_list' AND column_name = 'sized_version')
            THEN
                ALTER TABLE quire_list
                    ADD COLUMN sections bigint, ADD COLUMN items bigint, ADD COLUMN sized_version bigint;
            END IF;
            IF to_regclass('quire_list_by_name') IS NULL THEN
                CREATE INDEX quire_list_by_name ON quire_list (name COLLATE "C");
            END IF;
        END $$
        """,
        // Sources (API.md §2b): how far each has applied its database's log (NULL while its table is being copied),
        // and the place of each of its rows (list, section, order key: ListStore.sourceState), written in the
        // transaction of the source's lists' commits.
        """
        CREATE TABLE IF NOT EXISTS quire_source (
            name text PRIMARY KEY,
            position bigint)
        """,
        """
        CREATE TABLE IF NOT EXISTS quire_source_row (
            source text NOT NULL,
            id text NOT NULL,
            place text NOT NULL,
            PRIMARY KEY (source, id))
        """,
        commitFunction,
        "COMMIT",
    ]

    static func run(
        _ queries: [PostgresQuery], on connection: PostgresConnection, logger: Logger, patience: Double
    ) throws {
        for query in queries {
            _ = try connection.query(query, logger: logger).wait(within: patience)
        }
    }

    /// The log's channel for `NOTIFY`.
    static let channel = "quire_changes"

    /// Drops the log's changes older than about the retention (any instance may; the newest are kept).
    ///
    /// - Returns: the number of changes dropped.
    @discardableResult
    public func trimLog() throws -> Int {
        try connections.with { connection in
            let keep = Int64(settings.logRetention)
            let result = try connection.query(
                "DELETE FROM quire_log WHERE position < (SELECT last_value FROM quire_log_position) - \(keep)",
                logger: logger
            ).wait(within: patience)
            return result.metadata.rows ?? 0
        }
    }

    /// Rows stored for `list`, sections and items (for tests and diagnostics).
    public func rowCounts(of list: String) throws -> (sections: Int, items: Int) {
        try connections.with { connection in
            let sections =
                try connection.query(
                    "SELECT count(*) FROM quire_section WHERE list = \(list)", logger: logger
                ).wait(within: patience).first?.decode(Int64.self) ?? 0
            let items =
                try connection.query(
                    "SELECT count(*) FROM quire_item WHERE list = \(list)", logger: logger
                ).wait(within: patience).first?.decode(Int64.self) ?? 0
            return (Int(sections), Int(items))
        }
    }
}
