/// An array as PostgreSQL prints it (`array_out`): `{1,2}`, `{"a b",NULL}`, `{{1,2},{3,4}}`, `{}`, and
/// `[0:1]={1,2}` when a lower bound is not 1 (the bounds are dropped: JSON arrays start at 0).
///
/// An element is in double quotes when it is empty, holds a delimiter, a brace, a quote, a backslash or white space,
/// or reads `NULL`; inside quotes a backslash escapes the next character. An unquoted `NULL`, in any case, is the
/// null element.
public enum PostgresArray: Sendable, Hashable {
    case null
    case element(String)
    case array([PostgresArray])

    /// The array `text` prints, or `nil` when it is not an array's text.
    ///
    /// - Parameter delimiter: the element type's delimiter (`typdelim`): `,`, or `;` for box.
    /// - Complexity: O(*n*) in the length of `text`.
    public static func parse(_ text: String, delimiter: UInt8 = UInt8(ascii: ",")) -> PostgresArray? {
        var reader = Reader(bytes: Array(text.utf8), delimiter: delimiter)
        return reader.document()
    }

    private struct Reader {
        let bytes: [UInt8]
        let delimiter: UInt8
        var position = 0
        /// Arrays nest at most 6 levels in PostgreSQL (MAXDIM).
        static let maximumDepth = 6

        mutating func document() -> PostgresArray? {
            if peek == UInt8(ascii: "[") {
                // Dimension decoration, `[1:2][0:3]=`: bounds only; the braces that follow hold every element.
                guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { return nil }
                position = equals + 1
            }
            skipSpaces()
            guard let array = array(depth: 1) else { return nil }
            skipSpaces()
            return position == bytes.count ? array : nil
        }

        var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipSpaces() {
            while let byte = peek, Self.isSpace(byte) { position += 1 }
        }

        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || (0x09...0x0D).contains(byte)
        }

        mutating func array(depth: Int) -> PostgresArray? {
            guard depth <= Self.maximumDepth, peek == UInt8(ascii: "{") else { return nil }
            position += 1
            skipSpaces()
            var elements: [PostgresArray] = []
            if peek == UInt8(ascii: "}") {
                position += 1
                return .array(elements)
            }
            while true {
                skipSpaces()
                guard let element = element(depth: depth) else { return nil }
                elements.append(element)
                skipSpaces()
                switch peek {
                case delimiter: position += 1
                case UInt8(ascii: "}"):
                    position += 1
                    return .array(elements)
                default: return nil
                }
            }
        }

        mutating func element(depth: Int) -> PostgresArray? {
            switch peek {
            case UInt8(ascii: "{"): return array(depth: depth + 1)
            case UInt8(ascii: "\""): return quoted()
            case nil, UInt8(ascii: "}"), delimiter: return nil
            default: return unquoted()
            }
        }

        mutating func quoted() -> PostgresArray? {
            position += 1
            var text: [UInt8] = []
            while let byte = peek {
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return .element(String(decoding: text, as: UTF8.self))
                case UInt8(ascii: "\\"):
                    guard let escaped = peek else { return nil }
                    text.append(escaped)
                    position += 1
                default:
                    text.append(byte)
                }
            }
            return nil
        }

        /// Up to a delimiter or a closing brace, white space at its end dropped; backslashes escape as in quotes
        /// (PostgreSQL never prints them unquoted, but reads them so).
        mutating func unquoted() -> PostgresArray? {
            var text: [UInt8] = []
            var kept = 0
            var escaped = false
            while let byte = peek, byte != delimiter, byte != UInt8(ascii: "}") {
                position += 1
                switch byte {
                case UInt8(ascii: "\\"):
                    guard let next = peek else { return nil }
                    text.append(next)
                    position += 1
                    kept = text.count
                    escaped = true
                case UInt8(ascii: "{"), UInt8(ascii: "\""):
                    return nil
                default:
                    text.append(byte)
                    if !Self.isSpace(byte) { kept = text.count }
                }
            }
            text.removeLast(text.count - kept)
            if !escaped, text.count == 4, String(decoding: text, as: UTF8.self).uppercased() == "NULL" {
                return .null
            }
            return .element(String(decoding: text, as: UTF8.self))
        }
    }
}
