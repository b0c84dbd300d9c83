import GRDB
public import QuireCore

extension SQLiteListStore {
    /// Up to `limit` stored lists of `selection` after `after`, in name order, with their versions and sizes,
    /// from the `list` table alone (see ``ListStore/summaries(of:after:limit:)``).
    ///
    /// Each range of the selection is one query on the unique index of `list.name` (SQLite compares text as
    /// bytes, the order of list names), in order, until the page is full: no name outside the selection is read.
    ///
    /// - Throws: ``StoreError`` when the file cannot be read.
    /// - Complexity: O(*r* log *n* + `limit`) for *r* ranges of the selection after `after` and *n* lists.
    public func summaries(of selection: ListSelection, after: String?, limit: Int) throws -> [ListSummary]? {
        do {
            let created = journalEntries.created()
            return try database.read { db in
                var summaries: [ListSummary] = []
                for range in selection.ranges(after: after) {
                    let remaining = limit - summaries.count
                    guard remaining > 0 else { break }
                    var conditions: [String] = []
                    var arguments: StatementArguments = []
                    if let lower = range.lower {
                        conditions.append(range.includesLower ? "name >= ?" : "name > ?")
                        arguments += [lower]
                    }
                    if let upper = range.upper {
                        conditions.append(range.includesUpper ? "name <= ?" : "name < ?")
                        arguments += [upper]
                    }
                    arguments += [remaining]
                    let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
                    let statement = try db.cachedStatement(
                        sql: "SELECT name, version, sections, items FROM list\(filter) ORDER BY name LIMIT ?")
                    let rows = try Row.fetchCursor(statement, arguments: arguments)
                    var found: [ListSummary] = []
                    while let row = try rows.next() {
                        let version: Int64 = row["version"]
                        found.append(
                            ListSummary(
                                name: row["name"], version: UInt64(bitPattern: version), sections: row["sections"],
                                items: row["items"]))
                    }
                    // Each list's last journaled write, unless the tables have reached it meanwhile.
                    let journaled = journalEntries.latest(of: found.map(\.name))
                    for (index, summary) in found.enumerated() {
                        if let entry = journaled[summary.name], UInt64(bitPattern: entry.version) > summary.version {
                            found[index] = Self.summary(entry)
                        }
                    }
                    // Lists the journal created and the tables do not hold yet: the first `remaining` names of
                    // both are the first `remaining` of the range.
                    let listed = Set(found.map(\.name))
                    for entry in created where range.contains(entry.list) && !listed.contains(entry.list) {
                        found.append(Self.summary(entry))
                    }
                    if found.count > listed.count {
                        found.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
                    }
                    summaries += found.prefix(remaining)
                }
                return summaries
            }
        } catch {
            throw StoreError.load(path, error)
        }
    }

    /// A list's summary as of its last journaled write.
    private static func summary(_ entry: Journal.Entry) -> ListSummary {
        ListSummary(
            name: entry.list, version: UInt64(bitPattern: entry.version), sections: entry.sections, items: entry.items)
    }
}
