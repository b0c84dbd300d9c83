import Logging
import QuireCore
import Synchronization

/// The first copy of a source's table, at the slot's snapshot: the table read with `COPY`, grouped by list (the
/// select orders by the list column), each list built whole and replaced, committed a few lists at a time with the
/// places of their rows. Holds one list's rows at a time, never the table. Lists the source held before (a resync)
/// that the copy did not fill are emptied; the position is committed last, once the copy is whole.
struct SourceCopy {
    let follower: SourceFollower
    let mapping: RowMapping
    let index: RowIndex
    /// What the store held of the source before: its lists are emptied when the copy leaves them without rows.
    let previous: SourceState

    /// The rows a commit of the copy gathers before it is made.
    static let rowsPerCommit = 2_000

    func run(on connection: PostgresConnection, position: LSN) throws {
        let columns = mapping.source.columns.published(primaryKey: mapping.key.map(\.name))
        let slots = columns.map { name in
            mapping.placingColumns.first { $0.name == name }?.index
                ?? mapping.dataColumns.first { $0.name == name }?.index
        }
        var select =
            "SELECT \(columns.map(Identifier.sqlQuoted).joined(separator: ", ")) FROM \(mapping.source.table.sql)"
        if let list = mapping.source.list.column { select += " ORDER BY \(Identifier.sqlQuoted(list))" }
        var batch = Batch(follower: follower, mapping: mapping, index: index)
        var list: String?
        var rows: [(terms: RowTerms, place: RowPlace)] = []
        try connection.copy(select) { values in
            // A copy of a large table takes a while: stopping the service does not wait for its end.
            if follower.isStopping { throw SourceStopped() }
            var row = [String?](repeating: nil, count: mapping.rowWidth)
            for (value, slot) in zip(values, slots) { if let slot { row[slot] = value } }
            switch mapping.terms(of: row) {
            case .failure(let skipped):
                follower.statistics.skipped.add(1, ordering: .relaxed)
                follower.logger.warning("\(skipped.description)")
            case .success(let terms):
                if terms.list != list, let done = list {
                    try batch.add(list: done, rows: rows)
                    rows = []
                }
                list = terms.list
                rows.append((terms, mapping.place(of: row, terms: terms)))
            }
        }
        if let done = list { try batch.add(list: done, rows: rows) }
        // The lists of an earlier copy that this one left without rows.
        let earlier = Set(previous.rows.values.compactMap { mapping.place(recorded: $0)?.list })
        for name in earlier.subtracting(batch.filled).sorted() { try batch.add(list: name, rows: []) }
        try batch.commit(position: position.rawValue)
    }

    /// Lists gathered for one commit.
    private struct Batch {
        let follower: SourceFollower
        let mapping: RowMapping
        let index: RowIndex
        var writes: [ListRegistry.QueuedWrite] = []
        var rows: [SourceProgress.Row] = []
        var filled: Set<String> = []
        var first = true

        mutating func add(list: String, rows listRows: [(terms: RowTerms, place: RowPlace)]) throws {
            if !listRows.isEmpty { filled.insert(list) }
            writes.append(ListRegistry.QueuedWrite(list, write: .replace(Self.document(listRows.map(\.terms)))))
            for (terms, place) in listRows {
                rows.append(SourceProgress.Row(id: terms.item.id, place: place.recorded))
            }
            if rows.count >= SourceCopy.rowsPerCommit { try commit(position: nil) }
        }

        mutating func commit(position: UInt64?) throws {
            let progress = SourceProgress(
                source: mapping.source.name, position: position, replacesRows: first, rows: rows)
            for outcome in follower.writer.commit(writes, progress: progress) {
                if case .failure(let error) = outcome { throw SourceWriteFailed(error: error) }
            }
            if first { index.removeAll() }
            // The records, not the places: a copied row's place is parsed again when a change first needs it.
            for row in rows { if let text = row.place { index.set(row.id, recorded: text) } }
            first = false
            writes = []
            rows = []
        }

        /// `{ "sections": [...] }` of `rows`: sections in their order, items in theirs.
        static func document(_ rows: [RowTerms]) -> JSONValue {
            var sections: [String: (section: SourceSection, key: SectionOrderKey, items: [RowTerms])] = [:]
            for row in rows {
                sections[row.section.id, default: (row.section, row.sectionKey, [])].items.append(row)
            }
            let ordered = sections.values.sorted { $0.key < $1.key }.map { entry in
                entry.section.json(items: entry.items.sorted { $0.itemKey < $1.itemKey }.map(\.item))
            }
            return ["sections": .array(ordered)]
        }
    }
}

/// The service stopped the follower in the middle of a copy: the copy is made again at the next start.
struct SourceStopped: Error {}

/// A write of the follower that the write path refused or could not store: the follower connects again and goes on
/// from the position the store holds.
struct SourceWriteFailed: Error, CustomStringConvertible {
    let error: ListRegistry.WriteError

    var description: String { "the store did not take the source's write: \(error)" }
}
