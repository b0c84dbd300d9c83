/// A column's type as the database names it, by its OID (`pg_type.oid`: what a Relation message of pgoutput and the
/// catalog give), and what Quire makes of its values: their JSON, and how they order.
///
/// The OIDs of built-in types are fixed by PostgreSQL (`pg_type.dat`); a type made by `CREATE TYPE` (an enum, a
/// domain, a composite) has an OID of its database, which is read here as "another type": its values are strings,
/// and it cannot be a sort column (see ``isOrderable``).
public struct PostgresType: Sendable, Hashable, CustomStringConvertible {
    public let oid: UInt32

    public init(oid: UInt32) {
        self.oid = oid
    }

    public static let bool = PostgresType(oid: 16)
    public static let bytea = PostgresType(oid: 17)
    public static let char = PostgresType(oid: 18)
    public static let name = PostgresType(oid: 19)
    public static let int8 = PostgresType(oid: 20)
    public static let int2 = PostgresType(oid: 21)
    public static let int4 = PostgresType(oid: 23)
    public static let text = PostgresType(oid: 25)
    public static let oidType = PostgresType(oid: 26)
    public static let json = PostgresType(oid: 114)
    public static let box = PostgresType(oid: 603)
    public static let float4 = PostgresType(oid: 700)
    public static let float8 = PostgresType(oid: 701)
    public static let bpchar = PostgresType(oid: 1042)
    public static let varchar = PostgresType(oid: 1043)
    public static let date = PostgresType(oid: 1082)
    public static let time = PostgresType(oid: 1083)
    public static let timestamp = PostgresType(oid: 1114)
    public static let timestamptz = PostgresType(oid: 1184)
    public static let interval = PostgresType(oid: 1186)
    public static let timetz = PostgresType(oid: 1266)
    public static let numeric = PostgresType(oid: 1700)
    public static let uuid = PostgresType(oid: 2950)
    public static let jsonb = PostgresType(oid: 3802)

    /// The element type of each built-in array type (`pg_type.typelem` of `_int4` and the others).
    static let elements: [UInt32: PostgresType] = [
        1000: .bool, 1001: .bytea, 1002: .char, 1003: .name, 1016: .int8, 1005: .int2, 1007: .int4, 1009: .text,
        1028: .oidType, 199: .json, 1020: .box, 1021: .float4, 1022: .float8, 1014: .bpchar, 1015: .varchar,
        1182: .date, 1183: .time, 1115: .timestamp, 1185: .timestamptz, 1187: .interval, 1270: .timetz,
        1231: .numeric, 2951: .uuid, 3807: .jsonb,
    ]

    /// The element type when this is an array type, else `nil`.
    public var element: PostgresType? { Self.elements[oid] }

    /// The names of the built-in types this module knows, for messages.
    static let names: [UInt32: String] = [
        16: "boolean", 17: "bytea", 18: "\"char\"", 19: "name", 20: "bigint", 21: "smallint", 23: "integer",
        25: "text", 26: "oid", 114: "json", 603: "box", 700: "real", 701: "double precision", 1042: "character",
        1043: "character varying", 1082: "date", 1083: "time", 1114: "timestamp", 1184: "timestamp with time zone",
        1186: "interval", 1266: "time with time zone", 1700: "numeric", 2950: "uuid", 3802: "jsonb",
    ]

    /// `integer`, `integer[]`, or `type 16384` for one this module does not know.
    public var description: String {
        if let name = Self.names[oid] { return name }
        if let element { return "\(element)[]" }
        return "type \(oid)"
    }

    /// What a value of the type is for JSON and for order.
    enum Kind: Sendable, Hashable {
        /// smallint, integer, bigint, oid: a JSON integer; ordered by value.
        case integer
        /// real, double precision, numeric: a JSON number written as PostgreSQL printed it; ordered by value.
        case decimal
        case boolean
        /// json, jsonb: the JSON itself.
        case json
        /// text, varchar, name, "char", uuid, bytea: a string, ordered by its UTF-8 bytes (uuid's and bytea's text
        /// orders as their bytes do: fixed-width lower-case hex).
        case text
        /// character(n): a string, ordered without its trailing spaces, as PostgreSQL compares it.
        case paddedText
        case date, time, timetz, timestamp, timestamptz
        case array(element: PostgresType)
        /// Anything else: a string, and not a sort column.
        case other
    }

    var kind: Kind {
        switch oid {
        case 20, 21, 23, 26: .integer
        case 700, 701, 1700: .decimal
        case 16: .boolean
        case 114, 3802: .json
        case 17, 18, 19, 25, 1043, 2950: .text
        case 1042: .paddedText
        case 1082: .date
        case 1083: .time
        case 1266: .timetz
        case 1114: .timestamp
        case 1184: .timestamptz
        default: element.map { .array(element: $0) } ?? .other
        }
    }

    /// Whether its values can order sections or items as PostgreSQL orders them: numbers, booleans, text types,
    /// dates and times. json has no order in PostgreSQL; jsonb's, arrays', intervals' and enums' orders are not
    /// reproduced here.
    public var isOrderable: Bool {
        switch kind {
        case .integer, .decimal, .boolean, .text, .paddedText, .date, .time, .timetz, .timestamp, .timestamptz: true
        case .json, .array, .other: false
        }
    }

    /// The delimiter between an array's elements of this type: `;` for box, `,` for every other built-in type.
    var arrayDelimiter: UInt8 { self == .box ? UInt8(ascii: ";") : UInt8(ascii: ",") }
}
