/// The cursor behind ``JSONParser``: reads values from a byte buffer, one token at a time.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    /// Numbers that are not an `Int64` as ``JSONValue/decimal(_:)`` (``JSONParser/keepsNumberText``).
    var keepsNumberText = false
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func fail(_ reason: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? position, reason: reason)
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    mutating func readValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard position < bytes.count else { throw fail("unexpected end of input, expected a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try readObject(depth: depth + 1)
        case UInt8(ascii: "["): return try readArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try readLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try readLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try readLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
        default: throw fail("unexpected character, expected a value")
        }
    }

    private mutating func readLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { throw fail("invalid literal") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for index in 0..<count where bytes[position + index] != expected[index] {
            throw fail("invalid literal")
        }
        position += count
    }

    private mutating func readObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
        position += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw fail("expected a string key")
            }
            let keyOffset = position
            let key = try readString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            position += 1
            skipWhitespace()
            let value = try readValue(depth: depth)
            if members.updateValue(value, forKey: key) != nil {
                throw fail("duplicate key \"\(key)\"", at: keyOffset)
            }
            skipWhitespace()
            guard position < bytes.count else { throw fail("unexpected end of input in an object") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    private mutating func readArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try readValue(depth: depth))
            skipWhitespace()
            guard position < bytes.count else { throw fail("unexpected end of input in an array") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    private func isDigit(_ index: Int) -> Bool {
        index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")
    }

    private mutating func readNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard isDigit(position) else { throw fail("expected a digit") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if isDigit(position) { throw fail("leading zeros are not allowed") }
        } else {
            while isDigit(position) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard isDigit(position) else { throw fail("expected a digit after '.'") }
            while isDigit(position) { position += 1 }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard isDigit(position) else { throw fail("expected a digit in the exponent") }
            while isDigit(position) { position += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        if keepsNumberText { return .decimal(JSONDecimal(checked: text)) }
        guard let value = Double(text), value.isFinite else { throw fail("number out of range", at: start) }
        return .double(value)
    }

    mutating func readString() throws(JSONParseError) -> String {
        let start = position
        position += 1
        let contentStart = position
        // Fast path: no escapes.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[contentStart..<position])
                position += 1
                guard let string = String(validating: slice, as: UTF8.self) else {
                    throw fail("invalid UTF-8 in a string", at: start)
                }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("unescaped control character in a string") }
            position += 1
        }
        var scalars: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[contentStart..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                guard let string = String(validating: scalars, as: UTF8.self) else {
                    throw fail("invalid UTF-8 in a string", at: start)
                }
                return string
            }
            if byte < 0x20 { throw fail("unescaped control character in a string") }
            if byte != UInt8(ascii: "\\") {
                scalars.append(byte)
                position += 1
                continue
            }
            position += 1
            guard position < bytes.count else { break }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append(0x22)
            case UInt8(ascii: "\\"): scalars.append(0x5C)
            case UInt8(ascii: "/"): scalars.append(0x2F)
            case UInt8(ascii: "b"): scalars.append(0x08)
            case UInt8(ascii: "f"): scalars.append(0x0C)
            case UInt8(ascii: "n"): scalars.append(0x0A)
            case UInt8(ascii: "r"): scalars.append(0x0D)
            case UInt8(ascii: "t"): scalars.append(0x09)
            case UInt8(ascii: "u"):
                var code = try readHex4()
                if code >= 0xD800 && code < 0xDC00 {
                    guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    else { throw fail("unpaired surrogate in a string") }
                    position += 2
                    let low = try readHex4()
                    guard low >= 0xDC00 && low < 0xE000 else { throw fail("unpaired surrogate in a string") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if code >= 0xDC00 && code < 0xE000 {
                    throw fail("unpaired surrogate in a string")
                }
                guard let scalar = Unicode.Scalar(code) else { throw fail("invalid escape") }
                scalars.append(contentsOf: UTF8.encode(scalar)!)
            default:
                throw fail("invalid escape '\\\(Character(Unicode.Scalar(escape)))'", at: position - 2)
            }
        }
        throw fail("unterminated string", at: start)
    }

    private mutating func readHex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - position >= 4 else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("invalid hex digit in a \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}
