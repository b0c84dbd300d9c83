extension PersistentTree {
    /// Checks, in debug builds only, that keys increase, counts and weights add up, every leaf is at the
    /// same depth and no node overflows.
    ///
    /// - Complexity: O(*n*) in debug builds; nothing in release builds.
    @inline(__always)
    func checkInvariants() {
        #if DEBUG
            if root.count <= 4096 { _ = Self.check(root, isRoot: true) }
        #endif
    }

    #if DEBUG
        /// Returns the depth of the subtree.
        private static func check(_ node: Node, isRoot: Bool) -> Int {
            precondition(node.width <= capacity(leaf: node.isLeaf), "node overflows")
            precondition(isRoot || node.width > 0, "empty non-root node")
            for index in node.keys.indices.dropFirst() {
                precondition(node.keys[index - 1] < node.keys[index], "keys out of order")
            }
            if node.isLeaf {
                precondition(node.count == node.width && node.values.count == node.width)
                precondition(node.weight == node.values.reduce(0) { $0 + $1.treeWeight })
                return 1
            }
            precondition(node.count == node.children.reduce(0) { $0 + $1.count })
            precondition(node.weight == node.children.reduce(0) { $0 + $1.weight })
            var depth: Int?
            for (index, child) in node.children.enumerated() {
                precondition(node.keys[index] == child.keys[child.width - 1], "stale separator key")
                let childDepth = check(child, isRoot: false)
                precondition(depth == nil || depth == childDepth, "leaves at different depths")
                depth = childDepth
            }
            return (depth ?? 0) + 1
        }
    #endif
}
