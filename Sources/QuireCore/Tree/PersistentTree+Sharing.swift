extension PersistentTree {
    /// A run of a tree's leaves, in key order: one leaf the other tree does not hold, or a whole subtree both hold
    /// (the same node, child `index` of `parent`), whose nodes need not be read.
    enum LeafRun {
        case unshared(Node)
        case shared(parent: Node, index: Int)
    }

    /// One node of a level of the walk: the root, or child `index` of `parent`. Held by its parent rather than by
    /// itself: a reference to a node retains it, and a retain writes the node's own memory, which across many lists
    /// is not in the cache; the parent's is, having just been read.
    private struct Slot {
        let parent: Node?
        let index: Int
        var shared = false

        func node(root: Node) -> Node { parent.map { $0.children[index] } ?? root }

        /// Whether this slot and `other` hold the same node, read from their parents without retaining it.
        func holdsSameNode(as other: Slot, roots: (Node, Node)) -> Bool {
            switch (parent, other.parent) {
            case (let mine?, let theirs?): mine.children[index] === theirs.children[other.index]
            case (let mine?, nil): mine.children[index] === roots.1
            case (nil, let theirs?): roots.0 === theirs.children[other.index]
            case (nil, nil): roots.0 === roots.1
            }
        }
    }

    /// This tree's leaves as runs, and the leaves of `old` this tree does not hold, both in key order: what differs
    /// between two versions of one tree, found without visiting what they share (nothing when they share the root).
    ///
    /// A write copies the path from the root to the leaves it changes, so the two trees share every other subtree as
    /// the same node. The walk goes down both trees a level at a time, expanding only the nodes that are not shared:
    /// a child of an expanded node of one tree is shared when it is also a child of an expanded node of the other (a
    /// node one tree holds under a shared subtree cannot be elsewhere in the other).
    ///
    /// - Complexity: O(*b* · *h* · *d*) for *d* changed paths of height *h* in nodes of *b* entries, plus the runs
    ///   returned; never more than O(*n* / *b*) nodes visited.
    func leafRuns(since old: PersistentTree) -> (runs: [LeafRun], departed: [Node]) {
        if root === old.root { return ([], []) }
        var newLevel = [Slot(parent: nil, index: 0)]
        var oldLevel = [Slot(parent: nil, index: 0)]
        var newHeight = Self.height(of: root)
        var oldHeight = Self.height(of: old.root)
        // A root split (or a root merged away) leaves the trees of different heights: bring the taller down first.
        while newHeight > oldHeight {
            newLevel = Self.expanding(newLevel, root: root)
            newHeight -= 1
        }
        while oldHeight > newHeight {
            oldLevel = Self.expanding(oldLevel, root: old.root)
            oldHeight -= 1
        }
        let roots = (root, old.root)
        Self.markShared(&newLevel, &oldLevel, roots: roots)
        while newHeight > 0 {
            newLevel = Self.expanding(newLevel, root: root)
            oldLevel = Self.expanding(oldLevel, root: old.root)
            Self.markShared(&newLevel, &oldLevel, roots: roots)
            newHeight -= 1
        }
        let runs = newLevel.map { slot -> LeafRun in
            guard slot.shared, let parent = slot.parent else { return .unshared(slot.node(root: root)) }
            return .shared(parent: parent, index: slot.index)
        }
        let departed = oldLevel.compactMap { $0.shared ? nil : $0.node(root: old.root) }
        return (runs, departed)
    }

    /// Levels above the leaves of `node` (0 for a leaf).
    private static func height(of node: Node) -> Int {
        var height = 0
        var current = node
        while !current.isLeaf {
            current = current.children[0]
            height += 1
        }
        return height
    }

    /// The next level down: the children of each unshared node, unshared until marked; shared slots as they are.
    private static func expanding(_ level: [Slot], root: Node) -> [Slot] {
        var next: [Slot] = []
        next.reserveCapacity(level.count + capacity(leaf: false))
        for slot in level {
            guard !slot.shared else {
                next.append(slot)
                continue
            }
            let node = slot.node(root: root)
            for index in node.children.indices { next.append(Slot(parent: node, index: index)) }
        }
        return next
    }

    /// Marks as shared, in both levels, every unshared node that both hold. Few nodes are unshared on a level (the
    /// paths of a write and their siblings): compared pairwise, in key order, rather than hashed into a set.
    private static func markShared(_ new: inout [Slot], _ old: inout [Slot], roots: (Node, Node)) {
        let oldUnshared = old.indices.filter { !old[$0].shared }
        guard !oldUnshared.isEmpty else { return }
        // Both levels are in key order, and a node both hold covers the same keys in both: a match for a later
        // slot of `new` never lies before the match of an earlier one.
        var start = 0
        for index in new.indices where !new[index].shared {
            var candidate = start
            while candidate < oldUnshared.count {
                let position = oldUnshared[candidate]
                if new[index].holdsSameNode(as: old[position], roots: roots) {
                    new[index].shared = true
                    old[position].shared = true
                    start = candidate + 1
                    break
                }
                candidate += 1
            }
        }
    }

    /// The first value of the subtree at `index` of `parent`, reading one path down its left side.
    static func firstValue(ofChild index: Int, of parent: Node) -> Value? {
        var node = parent.children[index]
        while !node.isLeaf { node = node.children[0] }
        return node.width > 0 ? node.values[0] : nil
    }

    /// The last value of the subtree at `index` of `parent`, reading one path down its right side.
    static func lastValue(ofChild index: Int, of parent: Node) -> Value? {
        var node = parent.children[index]
        while !node.isLeaf { node = node.children[node.width - 1] }
        return node.width > 0 ? node.values[node.width - 1] : nil
    }
}
