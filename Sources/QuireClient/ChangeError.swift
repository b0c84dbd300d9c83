/// Changes the client refuses to apply: they break a rule of the format, or do not fit the window.
/// The window is left as it was; the client should reset its session.
public struct ChangeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which rule or check failed, in a sentence.
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
