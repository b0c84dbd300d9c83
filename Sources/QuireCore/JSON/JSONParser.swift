/// A strict RFC 8259 JSON parser over bytes.
///
/// It accepts exactly one value surrounded by optional whitespace, rejects duplicate object keys,
/// invalid UTF-8, unescaped control characters, lone surrogates, leading zeros and trailing commas,
/// and limits nesting to ``maxDepth``. It never traps on any input: every problem is a
/// ``JSONParseError`` that carries the byte offset.
public struct JSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted (default 64).
    public var maxDepth: Int
    /// Whether a number that is not an `Int64` is kept as its text, a ``JSONValue/decimal(_:)``, rather than
    /// rounded to a ``JSONValue/double(_:)`` (default false): for JSON that must be written again exactly as it
    /// came, such as a database's `json` column.
    public var keepsNumberText: Bool

    /// A parser accepting nesting up to `maxDepth` levels.
    public init(maxDepth: Int = 64, keepsNumberText: Bool = false) {
        self.maxDepth = maxDepth
        self.keepsNumberText = keepsNumberText
    }

    /// Parses one JSON document.
    ///
    /// - Parameter bytes: UTF-8 JSON text.
    /// - Returns: the value.
    /// - Throws: ``JSONParseError`` with the byte offset of the first problem.
    /// - Complexity: O(*n*) in the length of `bytes`.
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Self.run(buffer, maxDepth: maxDepth, keepsNumberText: keepsNumberText)
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer {
            Self.run($0, maxDepth: maxDepth, keepsNumberText: keepsNumberText)
        }.get()
    }

    /// Parses one JSON document from a string.
    ///
    /// - Complexity: O(*n*) in the length of `text`.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private static func run(
        _ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int, keepsNumberText: Bool
    ) -> Result<JSONValue, JSONParseError> {
        var reader = JSONReader(bytes: buffer, maxDepth: maxDepth)
        reader.keepsNumberText = keepsNumberText
        do throws(JSONParseError) {
            reader.skipWhitespace()
            let value = try reader.readValue(depth: 0)
            reader.skipWhitespace()
            if reader.position != buffer.count {
                throw JSONParseError(offset: reader.position, reason: "unexpected data after the JSON value")
            }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }
}
