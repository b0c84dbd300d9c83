/// Changes the client refuses to apply: they break a rule of the format, or do not fit the window.
/// The window is left as it was; the client should reset its session.
///
/// ``QuireSession`` does that itself: an answer it cannot apply costs one reset (a fresh first page, counted
/// in ``QuireSession/Statistics-swift.struct/resets``), never a wrong window. An app sees this error only from
/// its own calls on the window model: applying changes it decoded itself, ``ClientWindow/item(at:as:)``, or
/// decoding JSON with ``ClientWindow/init(pageSections:)``, ``BatchChanges/init(data:)`` or
/// ``ClientJSON/init(parsing:)``.
public struct ChangeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which rule or check failed, in a sentence.
    public let message: String

    /// An error saying which rule or check failed.
    public init(_ message: String) {
        self.message = message
    }

    /// The ``message``.
    public var description: String { message }
}
