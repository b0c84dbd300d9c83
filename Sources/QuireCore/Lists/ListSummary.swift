/// A list as a listing shows it (`GET /v1/lists`): its name, current version and sizes. A store keeps these
/// beside each list, so that lists are listed without being loaded.
public struct ListSummary: Sendable, Equatable {
    public let name: String
    public let version: UInt64
    /// Number of sections.
    public let sections: Int
    /// Number of items, children at every depth included (``ListVersion/itemCount``).
    public let items: Int

    public init(name: String, version: UInt64, sections: Int, items: Int) {
        self.name = name
        self.version = version
        self.sections = sections
        self.items = items
    }

    /// The summary of `version` of the list `name`.
    ///
    /// - Complexity: O(1).
    public init(name: String, _ version: ListVersion) {
        self.init(name: name, version: version.version, sections: version.sectionCount, items: version.itemCount)
    }
}
