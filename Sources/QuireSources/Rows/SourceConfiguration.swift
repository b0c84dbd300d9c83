/// One source of `sources:` in the configuration file: a table of the app's own PostgreSQL database that Quire
/// keeps lists from (openapi.yaml's description of sources; docs/operations.md, "Sources").
///
/// ```yaml
/// sources:
///   - name: inbox
///     url: postgres://quire:secret@127.0.0.1:5432/app
///     table: public.messages
///     list: "inbox-{owner}"
///     section: folder
///     sectionOrder: asc
///     order: ["sent_at desc", "id"]
///     type: message
///     data: [sender, subject, unread, sent_at]
/// ```
///
/// A value is made by ``init(entry:index:environment:limits:)`` (or ``all(in:environment:limits:)`` for the whole
/// list), which refuses what cannot work, naming the source and the key; what only the database can tell (the
/// table, its columns, `wal_level`) is checked by ``refusals(in:)``. Table and column names are the names the
/// catalog holds, as they are: case matters and nothing is folded to lower case (a table made by an unquoted
/// `CREATE TABLE Messages` is `messages`; one made as `"Message"` is `Message`).
public struct SourceConfiguration: Sendable, Hashable {
    /// `[a-z0-9_]{1,32}`: names the publication and the replication slot (``publication``, ``slot``).
    public let name: String
    /// The database's URL, `postgres://user:password@host:port/database`: the configuration's `url`, or the
    /// environment's `QUIRE_SOURCES_<NAME>_URL`, which wins as every environment variable wins over the file. Its
    /// password is secret: ``redactedURL`` is what may be printed.
    public let url: String
    /// The table whose rows the lists are kept from.
    public let table: TableName
    /// The list a row belongs to.
    public let list: ListTemplate
    /// The column whose value is a row's section id.
    public let section: String
    /// The order of a list's sections, by their section values (default ascending).
    public let sectionOrder: SortDirection
    /// The order of the items of a section; the primary key breaks ties (default: the primary key alone).
    public let order: [OrderTerm]
    /// Every item's type.
    public let type: TypeTemplate
    /// The columns an item's data carries, by name, in the configuration's order (default none: `{}`).
    public let data: [String]

    /// The keys a source may have, in the order `quire config` prints them.
    public static let keys = ["name", "url", "table", "list", "section", "sectionOrder", "order", "type", "data"]

    /// The publication the follower creates and reads: `quire_<name>`.
    public var publication: String { "quire_\(name)" }

    /// The logical replication slot of the source: `quire_<name>`.
    public var slot: String { "quire_\(name)" }

    /// The environment variable whose value is the URL, `QUIRE_SOURCES_<NAME>_URL`.
    public static func urlVariable(for name: String) -> String {
        "QUIRE_SOURCES_\(name.uppercased())_URL"
    }

    /// ``url`` with its password replaced by `<redacted>`: what messages, logs and `quire config` show.
    public var redactedURL: String { SourceURL.redactingPassword(of: url) }

    /// The columns the source reads from its table, by the key that names them.
    public var columns: SourceColumns {
        SourceColumns(
            list: list.column, section: section, order: order.map(\.column), type: type.column, data: data)
    }

    /// Memberwise, for code and tests; configuration files go through ``init(entry:index:environment:limits:)``,
    /// which checks every value.
    public init(
        name: String, url: String, table: TableName, list: ListTemplate, section: String,
        sectionOrder: SortDirection = .ascending, order: [OrderTerm] = [], type: TypeTemplate, data: [String] = []
    ) {
        self.name = name
        self.url = url
        self.table = table
        self.list = list
        self.section = section
        self.sectionOrder = sectionOrder
        self.order = order
        self.type = type
        self.data = data
    }
}

extension SourceConfiguration: CustomStringConvertible {
    /// `inbox: public.messages → inbox-{owner} (postgres://quire:<redacted>@db:5432/app)`: never the password.
    public var description: String {
        "\(name): \(table) → \(list) (\(redactedURL))"
    }
}

/// `asc` or `desc`.
public enum SortDirection: String, Sendable, Hashable, CaseIterable {
    case ascending = "asc"
    case descending = "desc"
}

/// One term of `order`: a column and its direction, `"sent_at desc"`.
public struct OrderTerm: Sendable, Hashable, CustomStringConvertible {
    public let column: String
    public let direction: SortDirection

    public init(column: String, direction: SortDirection = .ascending) {
        self.column = column
        self.direction = direction
    }

    /// `sent_at desc`, `id` for ascending; a name that needs them in double quotes (`"sent at" desc`).
    public var description: String {
        let name = Identifier.quotedIfNeeded(column)
        return direction == .ascending ? name : "\(name) desc"
    }
}

/// `schema.table`.
public struct TableName: Sendable, Hashable, CustomStringConvertible {
    public let schema: String
    public let name: String

    public init(schema: String = "public", name: String) {
        self.schema = schema
        self.name = name
    }

    /// `public.messages`, with double quotes around a part that needs them to be read back (`"my schema".t`).
    public var description: String {
        "\(Identifier.quotedIfNeeded(schema)).\(Identifier.quotedIfNeeded(name))"
    }

    /// `"public"."messages"`: both parts quoted, for SQL, where an unquoted name would be folded to lower case.
    public var sql: String {
        "\(Identifier.sqlQuoted(schema)).\(Identifier.sqlQuoted(name))"
    }
}

/// `list`: a constant list name (`inbox`), or a literal prefix followed by one column (`inbox-{owner}`).
public struct ListTemplate: Sendable, Hashable, CustomStringConvertible {
    /// The literal text: the whole name when ``column`` is `nil`.
    public let prefix: String
    /// The column whose text follows the prefix.
    public let column: String?

    public init(prefix: String, column: String? = nil) {
        self.prefix = prefix
        self.column = column
    }

    /// Whether `list` is a name this template can make: a list that is a source's, whether or not rows of it exist
    /// (what a write through the API to it is refused by).
    public func canMake(_ list: String) -> Bool {
        column == nil ? list == prefix : list.utf8.count > prefix.utf8.count && list.utf8.starts(with: prefix.utf8)
    }

    /// Whether some list name could be made by both templates.
    public func overlaps(_ other: ListTemplate) -> Bool {
        switch (column, other.column) {
        case (nil, nil): prefix == other.prefix
        case (nil, _?): other.canMake(prefix)
        case (_?, nil): canMake(other.prefix)
        case (_?, _?): prefix.utf8.starts(with: other.prefix.utf8) || other.prefix.utf8.starts(with: prefix.utf8)
        }
    }

    public var description: String {
        column.map { "\(prefix){\($0)}" } ?? prefix
    }
}

/// `type`: one type for every item (`message`), or the text of a column (`"{kind}"`).
public enum TypeTemplate: Sendable, Hashable, CustomStringConvertible {
    case constant(String)
    case column(String)

    /// The column it reads, if any.
    public var column: String? {
        if case .column(let name) = self { return name }
        return nil
    }

    public var description: String {
        switch self {
        case .constant(let type): type
        case .column(let name): "{\(name)}"
        }
    }
}

/// The columns a source names, by the key that names them: what its table must have (``SourceConfiguration/
/// refusals(in:)``), and what the publication needs to carry, with the primary key.
public struct SourceColumns: Sendable, Hashable {
    public var list: String?
    public var section: String
    public var order: [String]
    public var type: String?
    public var data: [String]

    /// Every column named, each once, in the order of the keys and then of their values.
    public var all: [String] {
        var seen: Set<String> = []
        return ([list, section].compactMap { $0 } + order + [type].compactMap { $0 } + data).filter {
            seen.insert($0).inserted
        }
    }

    /// Each column with the key that names it (a column named by two keys appears twice), in the order of ``all``.
    public var byKey: [(key: String, column: String)] {
        var pairs: [(key: String, column: String)] = []
        if let list { pairs.append(("list", list)) }
        pairs.append(("section", section))
        pairs += order.map { ("order", $0) }
        if let type { pairs.append(("type", type)) }
        pairs += data.map { ("data", $0) }
        return pairs
    }

    /// The columns the publication must carry for a table with this primary key: these and the key's, each once.
    /// Nothing else leaves the database.
    public func published(primaryKey: [String]) -> [String] {
        let named = all
        return named + primaryKey.filter { !named.contains($0) }
    }
}
