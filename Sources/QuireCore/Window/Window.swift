/// A contiguous run of a version's visible order, cut into its sections: a page, or what a session's
/// client holds. Windows are values; the diff compares two of them.
public struct Window: Sendable {
    /// The version the window was cut from.
    public let version: UInt64
    /// The expanded ids the visible order was computed with.
    public let expanded: Set<String>
    /// Visible position of the first item (across sections).
    public let start: Int
    /// Items in the window.
    public let count: Int
    /// Visible items in the whole version.
    public let total: Int
    /// The sections the run touches, in order, with their slices.
    public let sections: [WindowSection]
    /// The largest interned key among the items (-1 when empty): sizes the diff's lookup table.
    let maximumKey: Int32
    /// The id table of the list's lineage: keys compare only between windows that share it.
    let interner: IdInterner

    /// Whether visible items come before the window.
    public var hasPrev: Bool { start > 0 }
    /// Whether visible items come after the window.
    public var hasNext: Bool { start + count < total }
    /// Visible position just past the last item.
    public var end: Int { start + count }

    /// The first item's id, or `nil` for an empty window.
    public var firstItemID: String? { sections.lazy.compactMap { $0.items.first?.id }.first }
    /// The last item's id, or `nil` for an empty window.
    public var lastItemID: String? { sections.reversed().lazy.compactMap { $0.items.last?.id }.first }

    /// The items' ids in order.
    ///
    /// - Complexity: O(*k*) in the window's size.
    public var itemIDs: [String] { sections.flatMap { $0.items.map(\.id) } }
}

/// A section's part of a window: the section, which slice of its visible items the window holds, and
/// those items.
public struct WindowSection: Sendable {
    let node: SectionNode
    /// Index of the slice's first item among the section's visible items.
    public let offset: Int
    /// The section's visible item count (all of it, not only the slice).
    public let count: Int
    /// The slice's items.
    public let items: [WindowItem]
    /// The section's key in the window's id table (its node's, unless the window was rekeyed).
    let key: Int32

    init(node: SectionNode, offset: Int, count: Int, items: [WindowItem], key: Int32? = nil) {
        self.node = node
        self.offset = offset
        self.count = count
        self.items = items
        self.key = key ?? node.key
    }

    /// The section's id.
    public var id: String { node.id }
}

/// An item in a window, with where it hangs in the tree of items.
public struct WindowItem: Sendable {
    let node: ItemNode
    /// The parent item when this is a child shown under an expanded item.
    let parent: ItemNode?
    /// Hash of everything the client renders: the item's bytes, parent, depth and child count.
    let hash: UInt64
    /// The interned id (stored, so the diff reads it without touching the node).
    let key: Int32
    /// End of the quoted id in `encoded`.
    let idEnd: Int32
    /// The node's encoded bytes (the same buffer, held here so writing skips a pointer chase).
    let encoded: [UInt8]
    /// Depth and child count, kept small so that a window's items pack tightly (the diff streams them).
    private let storedDepth: Int32
    private let storedChildCount: Int32

    /// 0 at the top level; n for a child n levels down.
    public var depth: Int { Int(storedDepth) }
    /// Number of direct children (0 without).
    public var childCount: Int { Int(storedChildCount) }

    init(node: ItemNode, parent: ItemNode?, depth: Int) {
        self.init(node: node, parent: parent, depth: depth, key: node.key, parentKey: parent?.key)
    }

    /// An item under keys of another id table (``Window/rekeyed(to:)``).
    init(node: ItemNode, parent: ItemNode?, depth: Int, key: Int32, parentKey: Int32?) {
        self.node = node
        self.parent = parent
        self.storedDepth = Int32(depth)
        var hash = ContentHash.combine(node.hash, UInt64(bitPattern: Int64(parentKey ?? -1)))
        hash = ContentHash.combine(hash, UInt64(depth) << 32 | UInt64(node.children.count))
        self.hash = hash
        self.key = key
        self.idEnd = Int32(node.idEnd)
        self.encoded = node.encoded
        self.storedChildCount = Int32(clamping: node.children.count)
    }

    /// The item's id.
    public var id: String { node.id }
    /// The parent's id for a child item.
    public var parentID: String? { parent?.id }
}
