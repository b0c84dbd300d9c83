/// One immutable version of a sectioned list.
///
/// A version is a value: readers on any thread use it without locks. Every write builds the next version
/// from this one and shares every unchanged node with it, so a one-item write costs O(log *n*) time and
/// memory, and keeping many versions alive costs memory in proportion to what changed between them.
///
/// Shape: a persistent tree of sections keyed by position labels; in each section a persistent tree of
/// items; in each item a tree of its children. Two persistent indexes map interned ids to a section's label
/// and to an item's container and label, so finding an item's position is O(log *n*).
public struct ListVersion: Sendable {
    /// The version number: 0 for ``empty(limits:interner:)``, +1 for every write.
    public internal(set) var version: UInt64
    /// The limits every write from this version is checked against.
    public let limits: ListLimits
    /// The id table shared by every version of this list.
    public let interner: IdInterner
    var sections: PersistentTree<OrderLabel, SectionNode>
    var sectionIndex: PersistentTree<Int32, OrderLabel>
    var itemIndex: PersistentTree<Int32, ItemLocation>
    /// What the recent versions of this lineage changed, for answers that cost what changed.
    var changeLog: ChangeLog
    /// What the write under way has changed so far (empty between writes).
    var pendingDelta = VersionDelta()
    /// A view's identity (``ViewLineage``), `nil` for a list's own versions: a view shares its list's id table.
    public internal(set) var viewLineage: ViewLineage?
    /// The most digits of a label given out since the lineage's labels were last laid out afresh: inserts
    /// always at the same place (a feed's head) make labels longer, and ``compacted()`` resets them.
    var longestLabel = 1

    init(
        version: UInt64, limits: ListLimits, interner: IdInterner, sections: PersistentTree<OrderLabel, SectionNode>,
        sectionIndex: PersistentTree<Int32, OrderLabel>, itemIndex: PersistentTree<Int32, ItemLocation>
    ) {
        self.version = version
        self.limits = limits
        self.interner = interner
        self.sections = sections
        self.sectionIndex = sectionIndex
        self.itemIndex = itemIndex
        self.changeLog = ChangeLog(base: version)
        checkInvariants()
    }

    /// A list with no sections, version 0: the start of a lineage.
    ///
    /// - Parameters:
    ///   - limits: the limits for every write.
    ///   - interner: the id table; a new one by default.
    /// - Complexity: O(1).
    public static func empty(limits: ListLimits = ListLimits(), interner: IdInterner = IdInterner()) -> ListVersion {
        ListVersion(
            version: 0, limits: limits, interner: interner, sections: PersistentTree(), sectionIndex: PersistentTree(),
            itemIndex: PersistentTree())
    }

    /// Number of sections.
    ///
    /// - Complexity: O(1).
    public var sectionCount: Int { sections.count }

    /// Number of items, children at every depth included.
    ///
    /// - Complexity: O(1).
    public var itemCount: Int { itemIndex.count }

    /// Number of top-level items (what a stateless page counts).
    ///
    /// - Complexity: O(1).
    public var topLevelItemCount: Int { sections.weight }

    /// The sections' ids, in order.
    ///
    /// - Complexity: O(*s*) in the number of sections.
    public var sectionIDs: [String] { sections.values.map(\.id) }

    /// Whether an item (at any depth) has this id.
    ///
    /// - Complexity: O(log *n*).
    public func containsItem(_ id: String) -> Bool {
        guard let key = interner.lookup(id) else { return false }
        return itemIndex.value(for: key) != nil
    }

    /// Whether a section has this id.
    ///
    /// - Complexity: O(log *s*).
    public func containsSection(_ id: String) -> Bool {
        guard let key = interner.lookup(id) else { return false }
        return sectionIndex.value(for: key) != nil
    }

    /// The next version number.
    var nextVersion: UInt64 { version + 1 }
}
