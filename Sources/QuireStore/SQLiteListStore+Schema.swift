import GRDB

extension SQLiteListStore {
    /// The migration that creates the schema: a file that has it applied was written by some release.
    static let firstMigration = "v1: lists, sections, items"
    /// The migration that copies the `item` table of an earlier file into its form keyed by id.
    static let itemsKeyedByID = "v4: items keyed by id"
    /// The migration that adds the journal of writes not yet written into the tables.
    static let journalOfWrites = "v5: journal of writes"
    /// The migration that adds what the followers of sources record with their lists.
    static let sourcesProgress = "v6: sources"

    /// The schema, created and upgraded by versioned migrations (GRDB records the applied ones in
    /// `grdb_migrations`). A migration, once released, never changes: a new one is appended.
    ///
    /// - `list`: one row per list, with its current version number (so versions keep counting across
    ///   restarts).
    /// - `section`: one row per section: its position key among the list's sections, header, footer.
    /// - `item`: one row per item, children included: its container (`parent` is a section id when
    ///   `nested` is 0, an item id when 1), its position key in that container, and its encoded JSON.
    ///   Its primary key is the item's id in its list and nothing else indexes it, so that a write finds each
    ///   row it touches by its key and changes one B-tree; loading sorts the list's rows by container and position.
    /// - `retired` (v2): the last version of each deleted list, until its name is created again, which goes on
    ///   from there (``retiredVersion(of:)``): a version number never names two contents of a list.
    /// - `list.sections`, `list.items` (v3): the list's sizes (items at every depth), written with its version by
    ///   every commit, so that a listing (``summaries(of:after:limit:)``) reads one row per list and never its
    ///   items. A file of an earlier release has them counted from its rows when it is opened.
    /// - `item` keyed by `(list, id)` (v4; v1 keyed it by position, with an index on ids): a file of an earlier
    ///   release has the table copied into this form, in one transaction, and is then compacted, when it is opened.
    /// - `journal` (v5): writes acknowledged but not yet written into the tables above, in order (`seq`): each
    ///   one's list, version, sizes, whether it created the list, and its ``StorageChanges`` encoded. `seq` is
    ///   `AUTOINCREMENT`: a journal emptied never numbers an entry below one it held. See
    ///   ``SQLiteListStore`` (durability) and ``applyJournal(of:in:)``.
    /// - `source`, `source_row` (v6): each source's position in its database's log (NULL until a copy of its table
    ///   is whole), and the place of each of its rows, written in the transaction of the lists' commits
    ///   (``commit(together:progress:)``).
    ///
    /// Position keys are blobs that sort as the elements do, with room between any two, so inserting or
    /// moving an item rewrites that item's row only (see ``StoragePosition``).
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(firstMigration) { db in
            try db.execute(
                sql: """
                    CREATE TABLE list (
                        id INTEGER PRIMARY KEY,
                        name TEXT NOT NULL UNIQUE,
                        version INTEGER NOT NULL
                    );
                    CREATE TABLE section (
                        list INTEGER NOT NULL,
                        id TEXT NOT NULL,
                        position BLOB NOT NULL,
                        header BLOB,
                        footer BLOB,
                        PRIMARY KEY (list, id)
                    ) WITHOUT ROWID;
                    CREATE TABLE item (
                        list INTEGER NOT NULL,
                        nested INTEGER NOT NULL,
                        parent TEXT NOT NULL,
                        position BLOB NOT NULL,
                        id TEXT NOT NULL,
                        body BLOB NOT NULL,
                        PRIMARY KEY (list, nested, parent, position)
                    ) WITHOUT ROWID;
                    CREATE UNIQUE INDEX item_by_id ON item (list, id);
                    """)
        }
        migrator.registerMigration("v2: versions of deleted lists") { db in
            try db.execute(
                sql: """
                    CREATE TABLE retired (
                        name TEXT PRIMARY KEY,
                        version INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v3: list sizes") { db in
            try db.execute(
                sql: """
                    ALTER TABLE list ADD COLUMN sections INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE list ADD COLUMN items INTEGER NOT NULL DEFAULT 0;
                    UPDATE list SET
                        sections = (SELECT count(*) FROM section WHERE section.list = list.id),
                        items = (SELECT count(*) FROM item WHERE item.list = list.id);
                    """)
        }
        migrator.registerMigration(itemsKeyedByID) { db in
            try db.execute(
                sql: """
                    CREATE TABLE item_by_key (
                        list INTEGER NOT NULL,
                        nested INTEGER NOT NULL,
                        parent TEXT NOT NULL,
                        position BLOB NOT NULL,
                        id TEXT NOT NULL,
                        body BLOB NOT NULL,
                        PRIMARY KEY (list, id)
                    ) WITHOUT ROWID;
                    INSERT INTO item_by_key (list, nested, parent, position, id, body)
                        SELECT list, nested, parent, position, id, body FROM item;
                    DROP TABLE item;
                    ALTER TABLE item_by_key RENAME TO item;
                    """)
        }
        migrator.registerMigration(journalOfWrites) { db in
            try db.execute(
                sql: """
                    CREATE TABLE journal (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        list TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        sections INTEGER NOT NULL,
                        items INTEGER NOT NULL,
                        new INTEGER NOT NULL,
                        changes BLOB NOT NULL
                    );
                    """)
        }
        migrator.registerMigration(sourcesProgress) { db in
            try db.execute(
                sql: """
                    CREATE TABLE source (
                        name TEXT PRIMARY KEY,
                        position INTEGER
                    ) WITHOUT ROWID;
                    CREATE TABLE source_row (
                        source TEXT NOT NULL,
                        id TEXT NOT NULL,
                        place TEXT NOT NULL,
                        PRIMARY KEY (source, id)
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }
}
