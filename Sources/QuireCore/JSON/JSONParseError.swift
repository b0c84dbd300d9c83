/// Why a byte sequence is not the JSON ``JSONParser`` accepts, and where.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset in the input where the problem was found.
    public let offset: Int
    /// What is wrong, in a short sentence without the offset.
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}
