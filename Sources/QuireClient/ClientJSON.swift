/// Any JSON value, as the client receives it in items, headers and footers.
///
/// An item is an object with at least `id` and `type`; its `data` is the producer's own JSON. Decode it into
/// the app's own type with ``ClientWindow/item(at:as:)`` rather than walking it by hand.
public enum ClientJSON: Hashable, Sendable {
    /// `null`: also a missing header or footer.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number (every JSON number, integers included, as a `Double`).
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([ClientJSON])
    /// An object, by member name.
    case object([String: ClientJSON])

    /// The member `key` of an object; `nil` when there is no such member or the value is not an object.
    public subscript(key: String) -> ClientJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, or `nil` when the value is not a string.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }
}

extension ClientJSON: Codable {
    /// Decodes any JSON value: `null`, a boolean, a number, a string, an array or an object.
    ///
    /// - Throws: `DecodingError` when the value is none of them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([ClientJSON].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: ClientJSON].self))
        }
    }

    /// Encodes the value as the JSON it stands for.
    ///
    /// - Throws: what the encoder throws (a number that is not finite, for `JSONEncoder`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }
}
