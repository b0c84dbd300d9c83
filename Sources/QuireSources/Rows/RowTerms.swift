public import QuireCore

/// A table's columns as a Relation message of pgoutput gives them, in the order of the row's values, and its
/// primary key in the key's own order (`pg_index.indkey`: a Relation message flags the key's columns but in the
/// table's order, so the order comes from the catalog).
public struct SourceRelation: Sendable, Hashable {
    public struct Column: Sendable, Hashable {
        public let name: String
        public let type: PostgresType

        public init(name: String, type: PostgresType) {
            self.name = name
            self.type = type
        }
    }

    public let columns: [Column]
    public let primaryKey: [String]

    public init(columns: [Column], primaryKey: [String]) {
        self.columns = columns
        self.primaryKey = primaryKey
    }
}

/// A row in Quire's terms: the list it is in, its item, its section, and the keys that place both.
public struct RowTerms: Sendable, Hashable {
    /// The list's name: the template's prefix and the list column's text.
    public let list: String
    public let item: SourceItem
    public let section: SourceSection
    /// The item's place among the items of its section.
    public let itemKey: ItemOrderKey
    /// The section's place among the sections of its list.
    public let sectionKey: SectionOrderKey
}

/// A top-level item made from a row.
public struct SourceItem: Sendable, Hashable {
    /// The primary key's text; a composite key's parts joined by `:` (``RowMapping/itemID(of:)``).
    public let id: String
    public let type: String
    /// An object of exactly the `data` columns, by name.
    public let data: JSONValue

    /// `{ "id", "type", "data" }`, as an op's item (`ListOp.decode`).
    public var json: JSONValue {
        ["id": .string(id), "type": .string(type), "data": data]
    }
}

/// A section made from a row's section value.
public struct SourceSection: Sendable, Hashable {
    /// The section column's text.
    public let id: String
    /// `{ "type": "section", "data": { "<section column>": <value> } }`.
    public let header: JSONValue

    /// `{ "id", "header", "footer": null, "items" }`, as an `insertSections` op's section.
    public func json(items: [SourceItem]) -> JSONValue {
        ["id": .string(id), "header": header, "footer": .null, "items": .array(items.map(\.json))]
    }
}

/// A row left out of its source's lists, and why: its list name, an id or its type breaks the lists' limits, or
/// its data is too large. Counted and logged by the follower, never fatal.
public struct SkippedRow: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// The list column is NULL.
        case listColumnNull(column: String)
        /// The name made is not a list name (`[A-Za-z0-9._-]{1,128}`).
        case invalidListName(String)
        /// A primary key column is NULL (a key tuple without it).
        case keyColumnNull(column: String)
        /// The item id is empty or longer than `limits.maxIdLength` bytes.
        case invalidItemID(bytes: Int)
        /// The section column is NULL.
        case sectionColumnNull(column: String)
        /// The section id is empty or longer than `limits.maxIdLength` bytes.
        case invalidSectionID(bytes: Int)
        /// The type column is NULL.
        case typeColumnNull(column: String)
        /// The type is empty or longer than `limits.maxTypeLength` bytes.
        case invalidType(bytes: Int)
        /// The item's data, as compact JSON, is larger than `limits.maxDataBytes`.
        case dataTooLarge(bytes: Int)
        /// The section header's data is larger than `limits.maxDataBytes`.
        case headerTooLarge(bytes: Int)
    }

    /// The source's name.
    public let source: String
    /// The item's id when it could be made, to find the row by.
    public let itemID: String?
    public let reason: Reason

    /// A short name of the reason, for a log field: `list_name`, `item_id`, `data`, …
    public var code: String {
        switch reason {
        case .listColumnNull, .invalidListName: "list_name"
        case .keyColumnNull, .invalidItemID: "item_id"
        case .sectionColumnNull, .invalidSectionID: "section_id"
        case .typeColumnNull, .invalidType: "type"
        case .dataTooLarge: "data"
        case .headerTooLarge: "header"
        }
    }

    public var description: String {
        let row = itemID.map { "row \(Self.shortened($0))" } ?? "a row"
        return "sources[\(source)]: \(row) left out: \(explanation)"
    }

    private var explanation: String {
        switch reason {
        case .listColumnNull(let column): "its list column \(column) is NULL"
        case .invalidListName(let name): "\(Self.shortened(name)) is not a list name ([A-Za-z0-9._-]{1,128})"
        case .keyColumnNull(let column): "its primary key column \(column) is NULL"
        case .invalidItemID(let bytes): "its id has \(bytes) bytes (1 to limits.maxIdLength)"
        case .sectionColumnNull(let column): "its section column \(column) is NULL"
        case .invalidSectionID(let bytes): "its section id has \(bytes) bytes (1 to limits.maxIdLength)"
        case .typeColumnNull(let column): "its type column \(column) is NULL"
        case .invalidType(let bytes): "its type has \(bytes) bytes (1 to limits.maxTypeLength)"
        case .dataTooLarge(let bytes): "its data has \(bytes) bytes, more than limits.maxDataBytes"
        case .headerTooLarge(let bytes): "its section header's data has \(bytes) bytes, more than limits.maxDataBytes"
        }
    }

    /// A value cut after 64 characters, quoted, so that a log line stays a line.
    static func shortened(_ text: String) -> String {
        var bytes: [UInt8] = []
        JSONWriter.writeString(text.count > 64 ? String(text.prefix(64)) + "…" : text, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
