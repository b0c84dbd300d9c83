/// The changes that turn one window into another (openapi.yaml), computed by ``Window/changes(to:)`` and
/// written by ``encodeBatch(into:)`` or ``encodeSequential(into:)``.
///
/// Indexes follow UIKit's batch rules: deletes and move sources before the batch, inserts and move targets
/// after it, updates after it.
///
/// Items are numbered across sections ("flat" indexes: a section's first item follows the previous
/// section's last), so that the per-item state lives in a few flat arrays.
public struct WindowChanges: Sendable {
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
    /// Flat index of each old section's first item, and the total at the end.
    let oldBase: [Int]
    /// Flat index of each new section's first item, and the total at the end.
    let newBase: [Int]
    /// Per old item (flat): the flat new index it goes to, -1 when deleted, -2 in a section not listed.
    let oldTargets: [Int32]
    /// Per new item (flat): the flat old index it comes from, -1 when inserted, -2 in an inserted section.
    let newSources: [Int32]
    /// Per new item (flat): ``stays`` and ``updated`` bits.
    let newFlags: [UInt8]

    static let stays: UInt8 = 1
    static let updated: UInt8 = 2

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

    /// The section holding flat index `flat`, given the sections' bases.
    static func section(of flat: Int, in bases: [Int]) -> Int {
        var low = 0
        var high = bases.count - 1
        while high - low > 1 {
            let middle = (low + high) / 2
            if bases[middle] <= flat { low = middle } else { high = middle }
        }
        return low
    }

    /// `[section, item]` of old flat index `flat`.
    func oldPath(_ flat: Int) -> (section: Int, item: Int) {
        var section = Self.section(of: flat, in: oldBase)
        while oldBase[section + 1] <= flat { section += 1 }
        return (section, flat - oldBase[section])
    }

    /// `[section, item]` of new flat index `flat`.
    func newPath(_ flat: Int) -> (section: Int, item: Int) {
        var section = Self.section(of: flat, in: newBase)
        while newBase[section + 1] <= flat { section += 1 }
        return (section, flat - newBase[section])
    }
}
