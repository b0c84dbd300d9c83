/// A replication message that cannot be read: cut short, with a kind or a marker the protocol does not have,
/// with bytes after its end, or with a name that is not UTF-8. The decoders throw it instead of trapping,
/// whatever the bytes.
public struct ReplicationDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The message being read (`Begin`, `Relation`, `XLogData`), or `message` when its kind is unknown.
    public var messageName: String
    /// The offset in the message's bytes where reading failed.
    public var offset: Int
    /// What was wrong there.
    public var reason: String

    public init(messageName: String, offset: Int, reason: String) {
        self.messageName = messageName
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "a \(messageName) message, at byte \(offset): \(reason)" }
}
