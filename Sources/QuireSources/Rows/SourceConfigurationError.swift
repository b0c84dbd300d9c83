/// A source that cannot work, with the source and the key to fix: `sources[inbox].order: "sent_at sideways" is not
/// "column [asc|desc]"`. The configuration's parser throws one; the check against the catalog returns every one it
/// finds. `quire serve` prints each and exits 2.
///
/// Its text never holds a password: a URL in it is redacted.
public struct SourceConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The source's name, or `#3` (its place in `sources:`, from 1) when it has no valid name.
    public let source: String
    /// The key, `order`; `nil` for what is about the entry as a whole (a duplicate name, an entry not a mapping).
    public let key: String?
    /// What is wrong and, where it helps, what to do.
    public let reason: String

    public init(source: String, key: String?, reason: String) {
        self.source = source
        self.key = key
        self.reason = reason
    }

    /// `sources[inbox].order`, `sources[#3]`, or `sources` for the list as a whole.
    public var path: String {
        guard !source.isEmpty else { return "sources" }
        return "sources[\(source)]" + (key.map { ".\($0)" } ?? "")
    }

    public var description: String { "\(path): \(reason)" }
}
