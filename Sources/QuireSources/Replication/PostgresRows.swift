/// A column of a query's answer: its name and its type (an OID of `pg_type`: 23 `integer`, 25 `text`, 1184
/// `timestamptz`).
public struct PostgresColumn: Hashable, Sendable {
    /// The column's name as the query gives it (its alias).
    public var name: String
    /// The OID of the column's type in `pg_type`.
    public var typeOID: UInt32

    public init(name: String, typeOID: UInt32) {
        self.name = name
        self.typeOID = typeOID
    }
}

/// The rows a query answered, every value as PostgreSQL's text output of it (`nil` for SQL's null), with the
/// columns' names and types.
public struct PostgresRows: Hashable, Sendable, RandomAccessCollection {
    /// The columns, in the query's order.
    public var columns: [PostgresColumn]
    /// The rows, each a value per column.
    public var rows: [[String?]]
    /// The command's tag (`SELECT 3`, `INSERT 0 1`).
    public var commandTag: String

    public init(columns: [PostgresColumn], rows: [[String?]], commandTag: String) {
        self.columns = columns
        self.rows = rows
        self.commandTag = commandTag
    }

    public var startIndex: Int { rows.startIndex }
    public var endIndex: Int { rows.endIndex }
    public subscript(position: Int) -> [String?] { rows[position] }

    /// The index of the column named `name`, or nil.
    ///
    /// - Complexity: O(*c*) in the number of columns.
    public func column(named name: String) -> Int? {
        columns.firstIndex { $0.name == name }
    }
}
