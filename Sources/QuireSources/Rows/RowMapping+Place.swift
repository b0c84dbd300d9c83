import QuireCore

/// Where a row is in its source's lists: what the follower keeps per row, so that a change that carries only the
/// row's key (a delete, an update under `REPLICA IDENTITY DEFAULT`) finds its list, and an insert finds its place
/// among the rows placed before it.
///
/// A class: a binary search reads the place of every row it probes, and a copy of the value would retain each of its
/// strings and key arrays where a reference is retained once.
public final class RowPlace: Sendable, Hashable {
    public let list: String
    public let section: String
    public let key: ItemOrderKey
    /// The texts of the columns that place the row (list, section, order, type and key columns) as the store records
    /// them: a JSON object by column name (`null` for SQL's null). Kept as the text, not as a dictionary: one
    /// allocation a row, shared with the store's record, where a dictionary of texts cost several hundred bytes a row
    /// of a million-row table; read only for an unchanged TOASTed value (``value(of:)``).
    public let recorded: String

    init(list: String, section: String, key: ItemOrderKey, recorded: String) {
        self.list = list
        self.section = section
        self.key = key
        self.recorded = recorded
    }

    public static func == (lhs: RowPlace, rhs: RowPlace) -> Bool {
        lhs.list == rhs.list && lhs.section == rhs.section && lhs.key == rhs.key && lhs.recorded == rhs.recorded
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(list)
        hasher.combine(section)
        hasher.combine(key)
        hasher.combine(recorded)
    }

    /// The text the row had in placing column `name` (`.some(nil)` for SQL's null), or `nil` when the record lacks it.
    ///
    /// - Complexity: O(*r*) in the record's length: it is read each time (only an update that leaves a TOASTed
    ///   placing value unchanged asks).
    public func value(of name: String) -> String?? {
        guard let member = RowMapping.members(ofRecord: recorded)?.first(where: { $0.name == name }) else {
            return nil
        }
        return .some(member.value)
    }
}

extension RowMapping {
    /// The place of a row the mapping turned into `terms`.
    public func place(of row: [String?], terms: RowTerms) -> RowPlace {
        // Written as it goes rather than as a `JSONValue` object encoded: one of these is made for every row changed.
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (position, slot) in placingSlots.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(slot.name, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            if let value = row[slot.index] {
                JSONWriter.writeString(value, into: &bytes)
            } else {
                bytes.append(contentsOf: "null".utf8)
            }
        }
        bytes.append(UInt8(ascii: "}"))
        let recorded = String(decoding: bytes, as: UTF8.self)
        return RowPlace(list: terms.list, section: terms.section.id, key: terms.itemKey, recorded: recorded)
    }

    /// A place the store recorded (``RowPlace/recorded``), read back with this mapping, or `nil` when it no longer places
    /// a row (a column renamed, a value the lists' limits now refuse).
    public func place(recorded text: String) -> RowPlace? {
        var row = [String?](repeating: nil, count: width)
        guard let members = Self.members(ofRecord: text) else { return nil }
        for slot in placingSlots {
            guard let member = members.first(where: { $0.name == slot.name }) else { return nil }
            row[slot.index] = member.value
        }
        // Only what places the row is made again (no item, whose data the record does not hold): a record is read
        // for every row a follower first touches, and for the rows an insert's binary search compares with.
        guard case .success(let placing) = placing(of: row), !headerIsTooLarge(ofSection: placing.section) else {
            return nil
        }
        return RowPlace(list: placing.list, section: placing.section, key: itemKey(of: row), recorded: text)
    }

    /// The members of a record (``RowPlace/recorded``): column names and their texts (`nil` for SQL's null), or `nil`
    /// when the text is not a JSON object.
    static func members(ofRecord text: String) -> [(name: String, value: String?)]? {
        flatMembers(of: text) ?? parsedMembers(of: text)
    }

    /// The members of a record as `place(of:terms:)` writes it, an object of strings and nulls with no space and no
    /// escape, read off its bytes; `nil` for any other text (``parsedMembers(of:)`` reads it). A record is read for
    /// every row a follower first touches, and for each row an insert's binary search compares with: a JSON tree
    /// made of it, to read three or four strings, cost several times the rest of the comparison.
    static func flatMembers(of text: String) -> [(name: String, value: String?)]? {
        var text = text
        return text.withUTF8 { bytes -> [(name: String, value: String?)]? in
            let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
            var at = 0
            func take(_ byte: UInt8) -> Bool {
                guard at < bytes.count, bytes[at] == byte else { return false }
                at += 1
                return true
            }
            func string() -> String? {
                guard take(quote) else { return nil }
                let start = at
                while at < bytes.count, bytes[at] != quote {
                    if bytes[at] == backslash || bytes[at] < 0x20 { return nil }
                    at += 1
                }
                guard at < bytes.count else { return nil }
                defer { at += 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
            }
            var members: [(name: String, value: String?)] = []
            guard take(UInt8(ascii: "{")) else { return nil }
            if take(UInt8(ascii: "}")) { return at == bytes.count ? members : nil }
            repeat {
                guard let name = string(), take(UInt8(ascii: ":")) else { return nil }
                if at + 4 <= bytes.count, bytes[at] == UInt8(ascii: "n"), bytes[at + 1] == UInt8(ascii: "u"),
                    bytes[at + 2] == UInt8(ascii: "l"), bytes[at + 3] == UInt8(ascii: "l")
                {
                    at += 4
                    members.append((name, nil))
                } else {
                    guard let value = string() else { return nil }
                    members.append((name, value))
                }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")), at == bytes.count else { return nil }
            return members
        }
    }

    /// The members of a record read as JSON (one with escapes or spaces), or `nil` when it is not an object; a member
    /// other than a string reads as SQL's null.
    static func parsedMembers(of text: String) -> [(name: String, value: String?)]? {
        guard case .object(let members)? = try? JSONParser().parse(text) else { return nil }
        var flat: [(name: String, value: String?)] = []
        for (name, value) in members {
            switch value {
            case .string(let text): flat.append((name, text))
            default: flat.append((name, nil))
            }
        }
        return flat
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
