/// A JSON value, as parsed by ``JSONParser`` and written by ``JSONWriter``.
///
/// Integers that fit in `Int64` (no fraction, no exponent) are kept exactly as ``int(_:)``; every other
/// number the parser reads is a ``double(_:)``. A ``decimal(_:)`` is a number made by code, not by the parser,
/// that must be written exactly as its text (a database's `numeric`). Objects are unordered: the writer emits their keys sorted, so equal values
/// always have the same canonical bytes.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case decimal(JSONDecimal)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    /// The members of an object, or `nil` for any other value.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The elements of an array, or `nil` for any other value.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The string, or `nil` for any other value.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The integer, or `nil` for any other value (a double with an integral value included).
    public var intValue: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9.0e18: return Int64(value)
        default: return nil
        }
    }

    /// The member `key` of an object; `nil` when absent or when this is not an object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// `true` for ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short name of the value's kind, for error messages ("object", "string", ...).
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double, .decimal: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The canonical compact JSON text of the value.
    public var description: String {
        String(decoding: JSONWriter.encode(self), as: UTF8.self)
    }
}
