/// What a source's database says about itself and the source's table, for the check before it is followed
/// (``SourceConfiguration/refusals(in:)``). The follower reads it (`SHOW wal_level`, `pg_roles.rolreplication` of
/// `current_user`, `has_table_privilege`, `pg_attribute` and `pg_index` of the table); this module only judges it.
public struct SourceCatalog: Sendable, Hashable {
    /// The table as the catalog has it.
    public struct Table: Sendable, Hashable {
        /// Its columns (not dropped), in their order, with their types.
        public var columns: [SourceRelation.Column]
        /// Its primary key's columns in the key's order; empty when it has none.
        public var primaryKey: [String]
        /// Whether the source's role may `SELECT` from it (the first copy reads it).
        public var canSelect: Bool

        public init(columns: [SourceRelation.Column], primaryKey: [String], canSelect: Bool) {
            self.columns = columns
            self.primaryKey = primaryKey
            self.canSelect = canSelect
        }
    }

    /// `SHOW wal_level`: `logical` is needed.
    public var walLevel: String
    /// The role the URL connects as (`current_user`).
    public var role: String
    /// Whether it has the `REPLICATION` attribute (or is a superuser).
    public var roleCanReplicate: Bool
    /// The source's table, `nil` when there is no such table.
    public var table: Table?

    public init(walLevel: String, role: String, roleCanReplicate: Bool, table: Table?) {
        self.walLevel = walLevel
        self.role = role
        self.roleCanReplicate = roleCanReplicate
        self.table = table
    }
}

extension SourceConfiguration {
    /// Everything that stops this source from working in the database `catalog` describes, each naming the source
    /// and the key to fix; empty when it can be followed. `quire serve` prints each and exits 2.
    ///
    /// Refused: `wal_level` other than `logical` and a role without `REPLICATION` (key `url`: the database); no such
    /// table, no `SELECT` on it, no primary key (key `table`); a column named by `list`, `section`, `order`, `type`
    /// or `data` that the table lacks; a `section` or `order` column whose type Quire cannot order as PostgreSQL
    /// does (``PostgresType/isOrderable``: json, jsonb, arrays, enums, intervals, …).
    ///
    /// - Complexity: O(*c* · *n*): each of the *c* columns named is looked for among the *n* columns of the table.
    public func refusals(in catalog: SourceCatalog) -> [SourceConfigurationError] {
        var refusals: [SourceConfigurationError] = []
        func refuse(_ key: String, _ reason: String) {
            refusals.append(SourceConfigurationError(source: name, key: key, reason: reason))
        }
        if catalog.walLevel != "logical" {
            refuse(
                "url",
                "the database's wal_level is \(catalog.walLevel), not logical: set wal_level = logical in "
                    + "postgresql.conf and restart PostgreSQL")
        }
        if !catalog.roleCanReplicate {
            refuse(
                "url",
                "the role \(catalog.role) has no REPLICATION attribute: ALTER ROLE \(Identifier.sqlQuoted(catalog.role)) "
                    + "REPLICATION")
        }
        guard let table = catalog.table else {
            refuse("table", "no such table \(self.table) in the database of \(redactedURL)")
            return refusals
        }
        if !table.canSelect {
            refuse(
                "table",
                "the role \(catalog.role) may not SELECT from \(self.table): GRANT SELECT ON \(self.table.sql) TO "
                    + Identifier.sqlQuoted(catalog.role))
        }
        if table.primaryKey.isEmpty {
            refuse("table", "\(self.table) has no primary key, which a row's item id is made of")
        }
        var reported: Set<String> = []
        for (key, column) in columns.byKey {
            guard let found = table.columns.first(where: { $0.name == column }) else {
                if reported.insert("\(key) \(column)").inserted {
                    refuse(key, "no column \(column) in \(self.table)")
                }
                continue
            }
            if key == "section" || key == "order", !found.type.isOrderable {
                refuse(
                    key,
                    "\(column) is \(found.type), which Quire cannot order as PostgreSQL does: order by a number, "
                        + "text, boolean, date, time or timestamp column")
            }
        }
        return refusals
    }
}
