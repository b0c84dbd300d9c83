/// Limits every write is validated against. The defaults suit a phone screen's lists.
public struct ListLimits: Sendable, Hashable {
    /// Items in a list, children included (default 1,000,000).
    public var maxItems: Int
    /// Sections in a list (default 10,000).
    public var maxSections: Int
    /// UTF-8 bytes of an id, of an item or of a section (default 256).
    public var maxIDLength: Int
    /// UTF-8 bytes of a `type` (default 128).
    public var maxTypeLength: Int
    /// Bytes of an item's or supplementary view's `data`, as canonical JSON (default 65,536).
    public var maxDataBytes: Int
    /// Deepest level of children: top-level items are at depth 0 (default 8).
    public var maxDepth: Int

    public init(
        maxItems: Int = 1_000_000, maxSections: Int = 10_000, maxIDLength: Int = 256, maxTypeLength: Int = 128,
        maxDataBytes: Int = 65_536, maxDepth: Int = 8
    ) {
        self.maxItems = maxItems
        self.maxSections = maxSections
        self.maxIDLength = maxIDLength
        self.maxTypeLength = maxTypeLength
        self.maxDataBytes = maxDataBytes
        self.maxDepth = maxDepth
    }
}
