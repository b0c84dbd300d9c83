/// Any JSON value, as the client receives it in items, headers and footers.
public enum ClientJSON: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([ClientJSON])
    case object([String: ClientJSON])

    /// The member `key` of an object.
    public subscript(key: String) -> ClientJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, or `nil`.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }
}

extension ClientJSON: Codable {
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
