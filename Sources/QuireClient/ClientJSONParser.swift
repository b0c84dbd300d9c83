/// A small strict JSON parser for what the client receives (Foundation's decoders are slow for generic
/// values: every failed type guess throws).
struct ClientJSONParser {
    private let bytes: [UInt8]
    private var position = 0
    private let maxDepth = 128

    /// Parses one JSON document.
    ///
    /// - Throws: ``ChangeError`` with the byte offset of the first problem.
    static func parse(_ bytes: [UInt8]) throws -> ClientJSON {
        var parser = ClientJSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw parser.fail("data after the JSON value") }
        return value
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private func fail(_ reason: String) -> ChangeError {
        ChangeError("invalid JSON at byte \(position): \(reason)")
    }

    private mutating func skipWhitespace() {
        while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) { position += 1 }
    }

    private mutating func expect(_ literal: String) throws {
        for byte in literal.utf8 {
            guard position < bytes.count, bytes[position] == byte else { throw fail("invalid literal") }
            position += 1
        }
    }

    private mutating func value(depth: Int) throws -> ClientJSON {
        guard depth < maxDepth else { throw fail("nesting too deep") }
        guard position < bytes.count else { throw fail("unexpected end") }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            position += 1
            var members: [String: ClientJSON] = [:]
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                let key = try string()
                skipWhitespace()
                try expect(":")
                skipWhitespace()
                members[key] = try value(depth: depth + 1)
                skipWhitespace()
                guard position < bytes.count else { throw fail("unexpected end") }
                position += 1
                if bytes[position - 1] == UInt8(ascii: "}") { return .object(members) }
                guard bytes[position - 1] == UInt8(ascii: ",") else { throw fail("expected ',' or '}'") }
            }
        case UInt8(ascii: "["):
            position += 1
            var elements: [ClientJSON] = []
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                guard position < bytes.count else { throw fail("unexpected end") }
                position += 1
                if bytes[position - 1] == UInt8(ascii: "]") { return .array(elements) }
                guard bytes[position - 1] == UInt8(ascii: ",") else { throw fail("expected ',' or ']'") }
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        default:
            let start = position
            while position < bytes.count, "+-.eE0123456789".utf8.contains(bytes[position]) { position += 1 }
            guard let number = Double(String(decoding: bytes[start..<position], as: UTF8.self)) else {
                throw fail("invalid value")
            }
            return .number(number)
        }
    }

    private mutating func string() throws -> String {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fail("expected a string") }
        position += 1
        var utf8: [UInt8] = []
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { throw fail("unterminated escape") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if code >= 0xD800 && code < 0xDC00 {
                        try expect("\\u")
                        code = 0x10000 + ((code - 0xD800) << 10) + (try hex4() - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("invalid escape") }
                    utf8.append(contentsOf: String(scalar).utf8)
                default: utf8.append(escape)
                }
            default:
                utf8.append(byte)
            }
        }
        throw fail("unterminated string")
    }

    private mutating func hex4() throws -> UInt32 {
        guard position + 4 <= bytes.count,
            let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
        else { throw fail("invalid \\u escape") }
        position += 4
        return code
    }
}
