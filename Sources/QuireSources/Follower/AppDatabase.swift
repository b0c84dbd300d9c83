/// What a source's follower asks of the app's database over a plain SQL connection: the catalog it checks the source
/// against, and the publication and slot it follows through, made when missing. Quire never writes to the app's
/// tables: a publication and a slot are the database's own objects, named after the source (`quire_<name>`).
struct AppDatabase {
    let source: SourceConfiguration
    let connection: PostgresConnection

    init(source: SourceConfiguration, connectTimeout: Duration = .seconds(10)) throws(PostgresError) {
        self.source = source
        connection = try PostgresConnection(
            url: source.url, applicationName: "quire source \(source.name)", connectTimeout: connectTimeout)
    }

    // MARK: - The catalog

    /// The database's settings, the role's rights and the source's table as its catalog has them.
    ///
    /// - Throws: ``PostgresError`` when the catalog cannot be read.
    func catalog() throws(PostgresError) -> SourceCatalog {
        let walLevel = try connection.query("SHOW wal_level").rows.first?.first??.lowercased() ?? ""
        let role = try connection.query(
            "SELECT current_user, rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user"
        ).rows.first
        let table = try self.table()
        return SourceCatalog(
            walLevel: walLevel, role: role?[0] ?? "", roleCanReplicate: role?[1] == "t", table: table)
    }

    /// The source's table: its columns in order, its primary key in the key's order, whether the role may read it.
    private func table() throws(PostgresError) -> SourceCatalog.Table? {
        let found = try connection.query(
            """
            SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')
            """, [source.table.schema, source.table.name])
        guard let oid = found.rows.first?.first ?? nil else { return nil }
        let columns = try connection.query(
            """
            SELECT attname, atttypid FROM pg_attribute
            WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped ORDER BY attnum
            """, [oid]
        ).rows.compactMap { row -> SourceRelation.Column? in
            guard let name = row[0], let type = row[1].flatMap({ UInt32($0) }) else { return nil }
            return SourceRelation.Column(name: name, type: PostgresType(oid: type))
        }
        let key = try connection.query(
            """
            SELECT a.attname FROM pg_index i
            CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
            WHERE i.indrelid = $1::oid AND i.indisprimary ORDER BY k.n
            """, [oid]
        ).rows.compactMap { $0[0] }
        let canSelect = try connection.query("SELECT has_table_privilege($1::oid, 'SELECT')", [oid]).rows.first?[0]
        return SourceCatalog.Table(columns: columns, primaryKey: key, canSelect: canSelect == "t")
    }

    // MARK: - The publication and the slot

    /// Makes the source's publication carry exactly `columns` of its table (PostgreSQL 15's column lists: no other
    /// column leaves the database): created when missing, its column list set again when the source names other
    /// columns. Needs the role to own the table (PostgreSQL's rule for publications).
    ///
    /// - Throws: ``PostgresError`` (`42501` when the role does not own the table).
    func ensurePublication(columns: [String]) throws(PostgresError) {
        let name = Identifier.sqlQuoted(source.publication)
        let list = columns.map(Identifier.sqlQuoted).joined(separator: ", ")
        let exists = try !connection.query(
            "SELECT 1 FROM pg_publication WHERE pubname = $1", [source.publication]
        ).rows.isEmpty
        guard exists else {
            try connection.execute("CREATE PUBLICATION \(name) FOR TABLE \(source.table.sql) (\(list))")
            return
        }
        let carried = try connection.query(
            "SELECT schemaname, tablename, unnest(attnames) FROM pg_publication_tables WHERE pubname = $1",
            [source.publication]
        ).rows
        let right = carried.allSatisfy { $0[0] == source.table.schema && $0[1] == source.table.name }
        if !right || Set(carried.compactMap { $0[2] }) != Set(columns) {
            try connection.execute("ALTER PUBLICATION \(name) SET TABLE \(source.table.sql) (\(list))")
        }
    }

    /// Why the role cannot make the source's publication carry `columns`, if it cannot: the publication is missing
    /// or carries other columns, and only the table's owner may create or change it (PostgreSQL's rule).
    func publicationRefusal(columns: [String]) throws(PostgresError) -> SourceConfigurationError? {
        let carried = try connection.query(
            "SELECT schemaname, tablename, unnest(attnames) FROM pg_publication_tables WHERE pubname = $1",
            [source.publication]
        ).rows
        let right = carried.allSatisfy { $0[0] == source.table.schema && $0[1] == source.table.name }
        if !carried.isEmpty && right && Set(carried.compactMap { $0[2] }) == Set(columns) { return nil }
        let owns = try connection.query(
            """
            SELECT pg_has_role(c.relowner, 'USAGE') OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2
            """, [source.table.schema, source.table.name]
        ).rows.first?[0]
        guard owns == "f" else { return nil }
        let list = columns.map(Identifier.sqlQuoted).joined(separator: ", ")
        let verb = carried.isEmpty ? "CREATE" : "ALTER"
        let statement =
            carried.isEmpty
            ? "CREATE PUBLICATION \(Identifier.sqlQuoted(source.publication)) FOR TABLE \(source.table.sql) (\(list))"
            : "ALTER PUBLICATION \(Identifier.sqlQuoted(source.publication)) SET TABLE \(source.table.sql) (\(list))"
        return SourceConfigurationError(
            source: source.name, key: "table",
            reason:
                "the publication \(source.publication) \(carried.isEmpty ? "does not exist" : "carries other columns"), "
                + "and only the owner of \(source.table) may \(verb.lowercased()) it: as the owner, \(statement)")
    }

    /// Takes the source's advisory lock for the life of this connection, when no other session holds it: whichever
    /// instance of a cluster holds it is the source's one follower, and its connection ending (the instance stopped
    /// or died) releases it for another to take.
    func takeFollowerLock() throws(PostgresError) -> Bool {
        try connection.query(
            "SELECT pg_try_advisory_lock(hashtext('quire source'), hashtext($1))", [source.slot]
        ).rows.first?[0] == "t"
    }

    /// Whether the source's slot exists.
    func slotExists() throws(PostgresError) -> Bool {
        try !connection.query("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", [source.slot]).rows.isEmpty
    }

    /// The database's current end of log, and how much log the slot keeps (its restart point to that end).
    func logPositions() throws(PostgresError) -> (current: LSN, retainedBytes: UInt64?) {
        let row = try connection.query(
            """
            SELECT pg_current_wal_lsn()::text,
                   (SELECT pg_current_wal_lsn() - restart_lsn FROM pg_replication_slots WHERE slot_name = $1)::text
            """, [source.slot]
        ).rows.first
        let current = row?[0].flatMap(LSN.init) ?? .invalid
        return (current, row?[1].flatMap { Double($0) }.map { UInt64(max(0, $0)) })
    }

    /// Drops the source's publication when it exists.
    func dropPublication() throws(PostgresError) {
        try connection.execute("DROP PUBLICATION IF EXISTS \(Identifier.sqlQuoted(source.publication))")
    }
}
