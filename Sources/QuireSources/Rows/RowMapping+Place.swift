import QuireCore

/// Where a row is in its source's lists: what the follower keeps per row, so that a change that carries only the
/// row's key (a delete, an update under `REPLICA IDENTITY DEFAULT`) finds its list, and an insert finds its place
/// among the rows placed before it.
public struct RowPlace: Sendable, Hashable {
    public let list: String
    public let section: String
    public let key: ItemOrderKey
    /// The texts of the columns that place the row (list, section, order, type and key columns) as the store records
    /// them: a JSON object by column name (`null` for SQL's null). Kept as the text, not as a dictionary: one
    /// allocation a row, shared with the store's record, where a dictionary of texts cost several hundred bytes a row
    /// of a million-row table; read only for an unchanged TOASTed value (``value(of:)``).
    public let recorded: String

    /// The text the row had in placing column `name` (`.some(nil)` for SQL's null), or `nil` when the record lacks it.
    ///
    /// - Complexity: O(*r*) in the record's length: it is parsed each time (only an update that leaves a TOASTed
    ///   placing value unchanged asks).
    public func value(of name: String) -> String?? {
        guard case .object(let members)? = try? JSONParser().parse(recorded), let value = members[name] else {
            return nil
        }
        if case .string(let text) = value { return .some(text) }
        return .some(nil)
    }
}

extension RowMapping {
    /// The place of a row the mapping turned into `terms`.
    public func place(of row: [String?], terms: RowTerms) -> RowPlace {
        var members: [String: JSONValue] = [:]
        for slot in placingSlots { members[slot.name] = row[slot.index].map(JSONValue.string) ?? .null }
        let recorded = String(decoding: JSONWriter.encode(.object(members)), as: UTF8.self)
        return RowPlace(list: terms.list, section: terms.section.id, key: terms.itemKey, recorded: recorded)
    }

    /// A place the store recorded (``RowPlace/recorded``), read back with this mapping, or `nil` when it no longer places
    /// a row (a column renamed, a value the lists' limits now refuse).
    public func place(recorded text: String) -> RowPlace? {
        guard case .object(let members)? = try? JSONParser().parse(text) else { return nil }
        var row = [String?](repeating: nil, count: width)
        for slot in placingSlots {
            guard let value = members[slot.name] else { return nil }
            if case .string(let text) = value { row[slot.index] = text }
        }
        guard case .success(let terms) = terms(of: row) else { return nil }
        return RowPlace(list: terms.list, section: terms.section.id, key: terms.itemKey, recorded: text)
    }

    /// The place of a section among its list's sections, from its id (the section column's text).
    public func sectionKey(ofSection id: String) -> SectionOrderKey {
        SectionOrderKey(value: SortValue(id, type: section.type), descending: source.sectionOrder == .descending)
    }

    /// The index in a row of each `data` column, by name.
    public var dataColumns: [(name: String, index: Int)] { data.map { ($0.name, $0.index) } }

    /// The index in a row of each placing column, by name.
    public var placingColumns: [(name: String, index: Int)] { placingSlots.map { ($0.name, $0.index) } }

    /// The number of values of a row.
    public var rowWidth: Int { width }
}
