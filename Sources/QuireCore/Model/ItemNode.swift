/// One item of a list version: its interned key, its encoded JSON and its children.
///
/// Immutable and shared between every version that did not change it.
final class ItemNode: Sendable, TreeValue {
    /// The interned id.
    let key: Int32
    /// The id as given.
    let id: String
    /// `{"id":…,"type":…,"data":…}`, canonical, encoded once when the item was written.
    let encoded: [UInt8]
    /// `encoded[6 ..< idEnd]` is the id as a JSON string.
    let idEnd: Int
    /// Hash of `encoded`.
    let hash: UInt64
    /// The children, keyed by their position labels. Every item without children holds ``noChildren``.
    let children: PersistentTree<OrderLabel, ItemNode>
    /// The children of every item that has none, and the items of every section that has none: one empty tree,
    /// rather than an empty node of its own each (an allocation a write, and its bytes kept for each item of every
    /// list in memory).
    static let noChildren = PersistentTree<OrderLabel, ItemNode>()
    /// Items below this one, at any depth.
    var descendantCount: Int { children.weight }

    convenience init(key: Int32, draft: ItemDraft, children: PersistentTree<OrderLabel, ItemNode>) {
        self.init(
            key: key, id: draft.id, encoded: draft.encoded, idEnd: draft.idEnd, hash: draft.hash, children: children)
    }

    init(
        key: Int32, id: String, encoded: [UInt8], idEnd: Int, hash: UInt64,
        children: PersistentTree<OrderLabel, ItemNode>
    ) {
        self.key = key
        self.id = id
        self.encoded = encoded
        self.idEnd = idEnd
        self.hash = hash
        self.children = children.isEmpty ? Self.noChildren : children
    }

    /// Levels of children below this one (0 without children).
    ///
    /// - Complexity: O(*d*) in the number of descendants.
    var height: Int {
        var height = 0
        children.forEach { _, child in
            height = max(height, child.height + 1)
            return true
        }
        return height
    }

    /// The same item with other children.
    ///
    /// - Complexity: O(1).
    func replacingChildren(_ children: PersistentTree<OrderLabel, ItemNode>) -> ItemNode {
        ItemNode(key: key, id: id, encoded: encoded, idEnd: idEnd, hash: hash, children: children)
    }

    /// The same children with new content.
    func replacingContent(_ draft: ItemDraft) -> ItemNode {
        ItemNode(key: key, draft: draft, children: children)
    }

    /// An item weighs itself and its descendants, so a children tree's weight counts the whole subtree.
    var treeWeight: Int { 1 + children.weight }

    /// The id as a JSON string, with its quotes.
    var quotedID: ArraySlice<UInt8> { encoded[6..<idEnd] }
}

/// Where an item lives: in a section (top level) or under a parent item, and under which label.
struct ItemLocation: TreeValue {
    /// The section's key, or the parent item's key.
    let container: Int32
    /// `true` when `container` is a parent item.
    let isChild: Bool
    let label: OrderLabel

    var treeWeight: Int { 0 }
}
