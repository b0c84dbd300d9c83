extension PersistentTree {
    /// Builds a tree from elements already sorted by strictly increasing key.
    ///
    /// - Complexity: O(*n*).
    init(sortedElements keys: [Key], _ values: [Value]) {
        precondition(keys.count == values.count)
        guard !keys.isEmpty else {
            self.init()
            return
        }
        var level: [Node] = []
        level.reserveCapacity(keys.count / Self.fill + 1)
        var start = 0
        while start < keys.count {
            let end = min(start + Self.fill, keys.count)
            level.append(Node(keys: Array(keys[start..<end]), values: Array(values[start..<end])))
            start = end
        }
        while level.count > 1 {
            var next: [Node] = []
            var index = 0
            while index < level.count {
                let end = min(index + Self.fill, level.count)
                next.append(Node(children: Array(level[index..<end])))
                index = end
            }
            level = next
        }
        self.init(root: level[0])
        checkInvariants()
    }

    /// Inserts `value` for `key`, replacing any value already stored for it.
    ///
    /// - Complexity: O(log *n*); copies one path of nodes.
    mutating func insert(_ value: Value, for key: Key) {
        let (left, right) = Self.inserting(value, for: key, into: root)
        root = right.map { Node(children: [left, $0]) } ?? left
        checkInvariants()
    }

    /// Removes the element for `key` and returns its value (`nil` when absent, and the tree is unchanged).
    ///
    /// - Complexity: O(log *n*); copies one path of nodes.
    @discardableResult
    mutating func remove(_ key: Key) -> Value? {
        guard let (node, removed) = Self.removing(key, from: root) else { return nil }
        var newRoot = node
        while !newRoot.isLeaf, newRoot.width == 1 { newRoot = newRoot.children[0] }
        if !newRoot.isLeaf, newRoot.width == 0 { newRoot = Node(keys: [], values: []) }
        root = newRoot
        checkInvariants()
        return removed
    }

    private static func inserting(_ value: Value, for key: Key, into node: Node) -> (Node, Node?) {
        var index = lowerBound(node.keys, key)
        if node.isLeaf {
            var keys = node.keys
            var values = node.values
            if index < keys.count, keys[index] == key {
                values[index] = value
            } else {
                keys.insert(key, at: index)
                values.insert(value, at: index)
            }
            if keys.count <= capacity { return (Node(keys: keys, values: values), nil) }
            let half = keys.count / 2
            return (
                Node(keys: Array(keys[..<half]), values: Array(values[..<half])),
                Node(keys: Array(keys[half...]), values: Array(values[half...]))
            )
        }
        if index == node.width { index -= 1 }
        let (left, right) = inserting(value, for: key, into: node.children[index])
        var children = node.children
        children[index] = left
        if let right { children.insert(right, at: index + 1) }
        if children.count <= capacity { return (Node(children: children), nil) }
        let half = children.count / 2
        return (Node(children: Array(children[..<half])), Node(children: Array(children[half...])))
    }

    private static func removing(_ key: Key, from node: Node) -> (Node, Value)? {
        let index = lowerBound(node.keys, key)
        guard index < node.width else { return nil }
        if node.isLeaf {
            guard node.keys[index] == key else { return nil }
            var keys = node.keys
            var values = node.values
            keys.remove(at: index)
            let removed = values.remove(at: index)
            return (Node(keys: keys, values: values), removed)
        }
        guard let (child, removed) = removing(key, from: node.children[index]) else { return nil }
        var children = node.children
        children[index] = child
        if child.width < minimum {
            rebalance(&children, at: index)
        }
        return (Node(children: children), removed)
    }

    /// Merges the underfull child at `index` with a neighbour, or spreads both evenly when they do not fit
    /// in one node.
    private static func rebalance(_ children: inout [Node], at index: Int) {
        if children[index].width == 0 {
            children.remove(at: index)
            return
        }
        guard children.count > 1 else { return }
        let low = index > 0 ? index - 1 : index
        let left = children[low]
        let right = children[low + 1]
        let merged: [Node]
        if left.isLeaf {
            let keys = left.keys + right.keys
            let values = left.values + right.values
            if keys.count <= capacity {
                merged = [Node(keys: keys, values: values)]
            } else {
                let half = keys.count / 2
                merged = [
                    Node(keys: Array(keys[..<half]), values: Array(values[..<half])),
                    Node(keys: Array(keys[half...]), values: Array(values[half...])),
                ]
            }
        } else {
            let grandchildren = left.children + right.children
            if grandchildren.count <= capacity {
                merged = [Node(children: grandchildren)]
            } else {
                let half = grandchildren.count / 2
                merged = [
                    Node(children: Array(grandchildren[..<half])), Node(children: Array(grandchildren[half...])),
                ]
            }
        }
        children.replaceSubrange(low...(low + 1), with: merged)
    }
}
