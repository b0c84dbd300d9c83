/// What `quire sources` does to a source's objects on its database: reads its slot's state, drops its slot (the
/// database no longer keeps log for it) and its publication. The follower is not running then: a slot in use by a
/// running `quire serve` cannot be dropped (`55006`), and the command says so.
public enum SourceAdministration {
    /// The source's slot and log as the database has them.
    public struct SlotStatus: Sendable {
        /// Whether the slot exists.
        public var exists: Bool
        /// Whether a connection streams from it now (a running follower).
        public var active: Bool
        /// The position the slot has been told is applied.
        public var confirmed: LSN?
        /// The database's end of log.
        public var current: LSN
        /// The log the slot keeps, in bytes.
        public var retainedBytes: UInt64?
        /// Whether the source's publication exists.
        public var publicationExists: Bool
    }

    /// The slot's and the publication's state.
    ///
    /// - Throws: ``PostgresError`` when the database cannot be reached or read.
    public static func status(of source: SourceConfiguration) throws(PostgresError) -> SlotStatus {
        let database = try AppDatabase(source: source)
        let slot = try database.connection.query(
            "SELECT active::text, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
            [source.slot]
        ).rows.first
        let positions = try database.logPositions()
        let publication = try !database.connection.query(
            "SELECT 1 FROM pg_publication WHERE pubname = $1", [source.publication]
        ).rows.isEmpty
        return SlotStatus(
            exists: slot != nil, active: slot?[0] == "true", confirmed: slot?[1].flatMap(LSN.init),
            current: positions.current, retainedBytes: positions.retainedBytes, publicationExists: publication)
    }

    /// Drops the source's slot when it exists.
    ///
    /// - Throws: ``PostgresError`` (`55006` when a running follower streams from it).
    public static func dropSlot(of source: SourceConfiguration) throws(PostgresError) {
        let database = try AppDatabase(source: source)
        guard try database.slotExists() else { return }
        _ = try database.connection.query("SELECT pg_drop_replication_slot($1)", [source.slot])
    }

    /// Drops the source's publication when it exists.
    ///
    /// - Throws: ``PostgresError``.
    public static func dropPublication(of source: SourceConfiguration) throws(PostgresError) {
        try AppDatabase(source: source).dropPublication()
    }
}
