/// The changes that turn one window into another (API.md §5), computed by ``Window/changes(to:)`` and
/// written by ``encodeBatch(into:)`` or ``encodeSequential(into:)``.
///
/// Indexes follow UIKit's batch rules: deletes and move sources before the batch, inserts and move targets
/// after it, updates after it.
public struct WindowChanges: Sendable {
    /// A section or item move, by index (items pack `section << 32 | item`).
    struct Move: Sendable {
        let from: Int
        let to: Int
    }

    /// The window the client holds.
    public let old: Window
    /// The window the client will hold.
    public let new: Window
    /// Per old section: its new index when it survives as the same section, else -1 (deleted, or sent as
    /// delete + insert because it moved and its items changed).
    let oldToNew: [Int]
    /// Per new section: its old index when it survives, else -1 (inserted).
    let newToOld: [Int]
    /// Per new section: whether it keeps its place (in the longest increasing subsequence).
    let sectionStays: [Bool]
    /// Per old section: per item, where it goes (packed new index path), or -1 when deleted. Empty for
    /// sections that do not survive.
    let oldTargets: [[Int64]]
    /// Per new section: per item, where it comes from (packed old index path), or -1 when inserted. Empty
    /// for inserted sections.
    let newSources: [[Int64]]
    /// Per new section: per item, whether it stays in place (not moved).
    let itemStays: [[Bool]]
    /// Per new section: per item, whether its content changed.
    let itemUpdates: [[Bool]]

    /// Number of deleted sections (including those sent as delete + insert).
    public let deletedSectionCount: Int
    /// Number of inserted sections (including those sent as delete + insert).
    public let insertedSectionCount: Int
    /// Number of moved sections.
    public let movedSectionCount: Int
    /// Number of sections whose header or footer changed.
    public let updatedSectionCount: Int
    /// Number of deleted items (items of deleted sections not counted).
    public let deletedItemCount: Int
    /// Number of inserted items (items of inserted sections not counted).
    public let insertedItemCount: Int
    /// Number of moved items.
    public let movedItemCount: Int
    /// Number of items whose content changed.
    public let updatedItemCount: Int

    /// Item counts of every section after the batch.
    public var counts: [Int] { new.sections.map(\.items.count) }

    /// Whether nothing changed.
    public var isEmpty: Bool { operationCount == 0 }

    /// Operations in the change, an inserted section counting one per item it carries.
    public var operationCount: Int {
        var insertedSectionItems = 0
        for (index, source) in newToOld.enumerated() where source < 0 {
            insertedSectionItems += new.sections[index].items.count
        }
        return deletedSectionCount + insertedSectionCount + movedSectionCount + updatedSectionCount
            + deletedItemCount + insertedItemCount + movedItemCount + updatedItemCount + insertedSectionItems
    }

    /// Whether the change is larger than `share` of the new window (at least one item), so that sending
    /// the whole window (a `reset`) is the better answer.
    ///
    /// - Parameter share: the configurable threshold, e.g. 0.5.
    /// - Complexity: O(*s*) in the number of sections.
    public func exceeds(share: Double) -> Bool {
        Double(operationCount) > share * Double(max(new.count, 1))
    }

    static func pack(_ section: Int, _ item: Int) -> Int64 { Int64(section) << 32 | Int64(item) }
    static func section(_ packed: Int64) -> Int { Int(packed >> 32) }
    static func item(_ packed: Int64) -> Int { Int(packed & 0xFFFF_FFFF) }
}
