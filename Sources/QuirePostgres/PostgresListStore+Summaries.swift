import PostgresNIO
public import QuireCore

extension PostgresListStore {
    /// Up to `limit` stored lists of `selection` after `after`, in name order, with their versions and sizes,
    /// from `quire_list` alone (see ``ListStore/summaries(of:after:limit:)``): every list of the cluster, in one
    /// query.
    ///
    /// Names compare `COLLATE "C"` (bytes, the order of list names, whatever the database's collation), on the
    /// index `quire_list_by_name`. The query is a `UNION ALL` of one branch per prefix range of the selection
    /// after `after`, each a seek of that index that reads at most `limit` names, and one branch for the single
    /// names (`name = ANY(…)` on the primary key), merged in name order: it reads at most `limit` rows per
    /// prefix plus one per name, never a name the selection leaves out. A row an earlier release wrote (its
    /// sizes missing, or of an older version than its own) has its sizes counted from its rows, for the lists
    /// of the page only.
    ///
    /// - Throws: ``PostgresStoreError`` when the database cannot be read.
    public func summaries(of selection: ListSelection, after: String?, limit: Int) throws -> [ListSummary]? {
        let ranges = selection.ranges(after: after)
        guard limit > 0, !ranges.isEmpty else { return [] }
        var binds = PostgresBindings()
        func parameter(_ value: some PostgresDynamicTypeEncodable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        let columns = "SELECT name, version, sections, items, sized_version FROM quire_list"
        var branches: [String] = []
        var names: [String] = []
        for range in ranges {
            // A single name stays whole after `after` (the cursor's name is before it, or leaves it out).
            if range.includesUpper, let lower = range.lower, range.upper == lower {
                names.append(lower)
                continue
            }
            var conditions: [String] = []
            if let lower = range.lower {
                conditions.append(#"name COLLATE "C" \#(range.includesLower ? ">=" : ">") \#(parameter(lower))"#)
            }
            if let upper = range.upper {
                conditions.append(#"name COLLATE "C" \#(range.includesUpper ? "<=" : "<") \#(parameter(upper))"#)
            }
            let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
            branches.append(#"(\#(columns)\#(filter) ORDER BY name COLLATE "C" LIMIT \#(limit))"#)
        }
        if !names.isEmpty {
            branches.append(#"(\#(columns) WHERE name = ANY(\#(parameter(names))))"#)
        }
        let sql = #"""
            SELECT name, version,
                CASE WHEN sized_version = version THEN sections
                    ELSE (SELECT count(*) FROM quire_section WHERE list = page.name) END,
                CASE WHEN sized_version = version THEN items
                    ELSE (SELECT count(*) FROM quire_item WHERE list = page.name) END
            FROM (\#(branches.joined(separator: " UNION ALL "))) AS page
            ORDER BY name COLLATE "C" LIMIT \#(limit)
            """#
        do {
            return try connections.with { connection in
                let rows = try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).wait(
                    within: patience)
                return try rows.map { row in
                    let (name, version, sections, items) = try row.decode((String, Int64, Int64, Int64).self)
                    return ListSummary(
                        name: name, version: UInt64(bitPattern: version), sections: Int(sections), items: Int(items))
                }
            }
        } catch {
            throw PostgresStoreError(
                "listing the lists in \(settings.redacted): \(PostgresConnections.describe(error))")
        }
    }
}
