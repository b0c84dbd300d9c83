/// Reads values out of JSON bytes where they lie, without building a ``JSONValue``: finds a member of an object,
/// skips a value, and reads a scalar as a slice of the bytes (a string without escapes) or a number.
///
/// Written for the canonical JSON of list items, which ``JSONParser`` validated before it was stored, it reads
/// any JSON; on bytes that are not JSON every read stays inside the buffer and answers "not found" or
/// ``Scalar/invalid`` (never a trap).
struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>

    /// A string's place: its content lies between `contentStart` and `contentEnd` (the closing quote).
    struct StringToken {
        let contentStart: Int
        let contentEnd: Int
        /// The content holds a backslash: its bytes are not the string's until decoded.
        let escaped: Bool
    }

    /// A value as a term compares it.
    enum Scalar {
        /// A string without escapes: its content, which is its UTF-8.
        case string(UnsafeBufferPointer<UInt8>)
        /// A string with escapes, to be decoded (``JSONScanner/decoded(_:)``) before comparing.
        case escapedString(StringToken)
        /// A number, `-0` made `0`.
        case number(Double)
        case bool(Bool)
        case null
        /// An object or an array.
        case composite
        /// Bytes that are no JSON value.
        case invalid
    }

    /// The index of the first byte at or after `index` that is not JSON whitespace.
    @inline(__always)
    func skipWhitespace(from index: Int) -> Int {
        var index = index
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return index
            }
        }
        return index
    }

    /// The string whose opening quote is at `start`, or `nil` when there is none or it is not closed.
    ///
    /// Eight bytes at a time while none is a quote or a backslash: most of an item's bytes are inside strings, and
    /// a term skips every member of `data` before its own.
    func stringToken(at start: Int) -> StringToken? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "\"") else { return nil }
        var index = start + 1
        var escaped = false
        let base = UnsafeRawPointer(bytes.baseAddress!)
        while true {
            while bytes.count - index >= 8 {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if Self.hasByte(0x22, in: word) || Self.hasByte(0x5C, in: word) { break }
                index += 8
            }
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""): return StringToken(contentStart: start + 1, contentEnd: index, escaped: escaped)
            case UInt8(ascii: "\\"):
                escaped = true
                index += 2
            default: index += 1
            }
        }
    }

    /// Whether one of the eight bytes of `word` is `byte`: the classic test for a zero byte, exact as a yes or no,
    /// on `word` with `byte` xored into each of its bytes.
    @inline(__always)
    private static func hasByte(_ byte: UInt8, in word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let difference = word ^ (ones &* UInt64(byte))
        return (difference &- ones) & ~difference & highs != 0
    }

    /// The index just past the value that starts at `start`, or `nil` when it does not end inside the bytes.
    func valueEnd(from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return stringToken(at: start).map { $0.contentEnd + 1 }
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard let token = stringToken(at: index) else { return nil }
                    index = token.contentEnd
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return nil
        case UInt8(ascii: "t"), UInt8(ascii: "n"):
            return start + 4 <= bytes.count ? start + 4 : nil
        case UInt8(ascii: "f"):
            return start + 5 <= bytes.count ? start + 5 : nil
        default:
            let end = numberEnd(from: start)
            return end > start ? end : nil
        }
    }

    /// Calls `body` with each member's key and the index where its value starts, in the order written, until
    /// `body` returns `false` or the object ends. Nothing is called when no object starts at `start`.
    func forEachMember(ofObjectAt start: Int, _ body: (StringToken, Int) -> Bool) {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{") else { return }
        var index = skipWhitespace(from: start + 1)
        while let key = stringToken(at: index) {
            index = skipWhitespace(from: key.contentEnd + 1)
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return }
            let valueStart = skipWhitespace(from: index + 1)
            guard valueStart < bytes.count, body(key, valueStart), let end = valueEnd(from: valueStart) else { return }
            index = skipWhitespace(from: end)
            guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { return }
            index = skipWhitespace(from: index + 1)
        }
    }

    /// Where the value of the member `key` starts in the object at `start`; `nil` when it has no such member or
    /// no object starts there.
    ///
    /// - Complexity: O(*n*) in the bytes of the members before it.
    @inline(__always)
    func memberValue(named key: some Collection<UInt8>, inObjectAt start: Int) -> Int? {
        var found: Int?
        forEachMember(ofObjectAt: start) { token, valueStart in
            guard string(token, equals: key) else { return true }
            found = valueStart
            return false
        }
        return found
    }

    /// Whether the string `token` is `text`, compared by bytes once decoded.
    ///
    /// Generic over the text's type so that a `String`'s UTF-8 view is read in place, without the closure and
    /// the runtime calls that asking for its contiguous storage costs.
    @inline(__always)
    func string(_ token: StringToken, equals text: some Collection<UInt8>) -> Bool {
        guard !token.escaped else { return decoded(token)?.elementsEqual(text) ?? false }
        guard text.count == token.contentEnd - token.contentStart else { return false }
        var index = token.contentStart
        for byte in text {
            if bytes[index] != byte { return false }
            index += 1
        }
        return true
    }

    /// Whether the string `token` is `text` (a key of the root: `id`, `type`, `data`).
    func string(_ token: StringToken, equals text: StaticString) -> Bool {
        string(token, equals: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// The UTF-8 of the string `token` with its escapes decoded; `nil` when an escape or the UTF-8 is invalid.
    func decoded(_ token: StringToken) -> [UInt8]? {
        var reader = JSONReader(bytes: bytes, maxDepth: 1)
        reader.position = token.contentStart - 1
        guard let string = try? reader.readString() else { return nil }
        return Array(string.utf8)
    }

    /// The scalar that starts at `start`, as a term compares it.
    func scalar(at start: Int) -> Scalar {
        guard start < bytes.count else { return .invalid }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            guard let token = stringToken(at: start) else { return .invalid }
            if token.escaped { return .escapedString(token) }
            return .string(UnsafeBufferPointer(rebasing: bytes[token.contentStart..<token.contentEnd]))
        case UInt8(ascii: "{"), UInt8(ascii: "["): return .composite
        case UInt8(ascii: "t"): return .bool(true)
        case UInt8(ascii: "f"): return .bool(false)
        case UInt8(ascii: "n"): return .null
        default: return number(from: start, to: numberEnd(from: start)).map(Scalar.number) ?? .invalid
        }
    }

    private func numberEnd(from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                UInt8(ascii: "e"), UInt8(ascii: "E"):
                index += 1
            default: return index
            }
        }
        return index
    }

    /// The number written in `bytes[start..<end]`: integers of up to 15 digits (exact in a `Double`) added up
    /// here, the rest through the standard library's correctly rounded parser.
    private func number(from start: Int, to end: Int) -> Double? {
        guard start < end else { return nil }
        var index = start
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let digitsStart = index
        var magnitude: UInt64 = 0
        while index < end, index - digitsStart < 15, bytes[index] &- UInt8(ascii: "0") < 10 {
            magnitude = magnitude &* 10 &+ UInt64(bytes[index] &- UInt8(ascii: "0"))
            index += 1
        }
        if index == end, index > digitsStart {
            return negative ? 0 - Double(magnitude) : Double(magnitude)  // `0 - 0` is `0`, not `-0`
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { return nil }
        return value + 0
    }
}
