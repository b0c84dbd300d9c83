/// A JSON number kept as the text it was written in, for numbers that a `Double` would round: a database's
/// arbitrary-precision `numeric`, with more digits than a `Double` holds, written out byte for byte as it was printed.
///
/// The text is checked once, when the value is made, against RFC 8259's grammar of a number, so that the writer can
/// copy it as it is and still write valid JSON. Two decimals are equal when their texts are: `1.50` and `1.5` are
/// different values, as they are different bytes.
public struct JSONDecimal: Sendable, Hashable, CustomStringConvertible {
    /// The number as it is written: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    public let text: String

    /// The decimal written as `text`, or `nil` when `text` is not a JSON number (`NaN`, `Infinity`, `.5`, `1.`,
    /// `01`, `+1`, or empty).
    ///
    /// - Complexity: O(*n*) in the length of `text`.
    public init?(_ text: String) {
        guard Self.isNumber(text.utf8) else { return nil }
        self.text = text
    }

    /// A decimal of text already read as a JSON number (by the parser).
    init(checked text: String) {
        self.text = text
    }

    public var description: String { text }

    /// Whether `bytes` are exactly one JSON number.
    static func isNumber(_ bytes: String.UTF8View) -> Bool {
        var index = bytes.startIndex
        func digits() -> Int {
            var count = 0
            while index != bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                bytes.formIndex(after: &index)
                count += 1
            }
            return count
        }
        func skip(_ byte: UInt8) -> Bool {
            guard index != bytes.endIndex, bytes[index] == byte else { return false }
            bytes.formIndex(after: &index)
            return true
        }
        _ = skip(UInt8(ascii: "-"))
        let leading = index
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[leading] != UInt8(ascii: "0") else { return false }
        if skip(UInt8(ascii: ".")), digits() == 0 { return false }
        if skip(UInt8(ascii: "e")) || skip(UInt8(ascii: "E")) {
            _ = skip(UInt8(ascii: "+")) || skip(UInt8(ascii: "-"))
            if digits() == 0 { return false }
        }
        return index == bytes.endIndex
    }
}
