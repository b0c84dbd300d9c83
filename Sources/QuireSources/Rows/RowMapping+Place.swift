import QuireCore

/// Where a row is in its source's lists: what the follower keeps per row, so that a change that carries only the
/// row's key (a delete, an update under `REPLICA IDENTITY DEFAULT`) finds its list, and an insert finds its place
/// among the rows placed before it.
public struct RowPlace: Sendable, Hashable {
    public let list: String
    public let section: String
    public let key: ItemOrderKey
    /// The texts of the columns that place the row (list, section, order, type and key columns), by name: what the
    /// store records (``RowMapping/recorded(_:)``), and what an unchanged TOASTed value among them is taken from.
    public let values: [String: String?]
}

extension RowMapping {
    /// The columns that place a row, each once: list, section, order, type, then the key's.
    var placingSlots: [Slot] {
        var seen: Set<Int> = []
        return ([list, section].compactMap { $0 } + order + [type].compactMap { $0 } + key).filter {
            seen.insert($0.index).inserted
        }
    }

    /// The place of a row the mapping turned into `terms`.
    public func place(of row: [String?], terms: RowTerms) -> RowPlace {
        var values: [String: String?] = [:]
        for slot in placingSlots { values[slot.name] = .some(row[slot.index]) }
        return RowPlace(list: terms.list, section: terms.section.id, key: terms.itemKey, values: values)
    }

    /// `place` as the store records it: a JSON object of its values (`null` for SQL's null).
    public func recorded(_ place: RowPlace) -> String {
        let members = place.values.mapValues { value -> JSONValue in value.map(JSONValue.string) ?? .null }
        return String(decoding: JSONWriter.encode(.object(members)), as: UTF8.self)
    }

    /// A place the store recorded (``recorded(_:)``), read back with this mapping, or `nil` when it no longer places
    /// a row (a column renamed, a value the lists' limits now refuse).
    public func place(recorded text: String) -> RowPlace? {
        guard case .object(let members)? = try? JSONParser().parse(text) else { return nil }
        var row = [String?](repeating: nil, count: width)
        for slot in placingSlots {
            guard let value = members[slot.name] else { return nil }
            if case .string(let text) = value { row[slot.index] = text }
        }
        guard case .success(let terms) = terms(of: row) else { return nil }
        return place(of: row, terms: terms)
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
