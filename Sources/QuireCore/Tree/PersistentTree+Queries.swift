extension PersistentTree {
    /// The value stored for `key`.
    ///
    /// - Complexity: O(log *n*).
    func value(for key: Key) -> Value? {
        var node = root
        while true {
            let index = Self.lowerBound(node.keys, key)
            guard index < node.width else { return nil }
            if node.isLeaf { return node.keys[index] == key ? node.values[index] : nil }
            node = node.children[index]
        }
    }

    /// The position of `key` among the keys, or `nil` when absent.
    ///
    /// - Complexity: O(log *n*).
    func rank(of key: Key) -> Int? {
        var node = root
        var before = 0
        while true {
            let index = Self.lowerBound(node.keys, key)
            guard index < node.width else { return nil }
            if node.isLeaf { return node.keys[index] == key ? before + index : nil }
            for child in node.children[..<index] { before += child.count }
            node = node.children[index]
        }
    }

    /// The element at position `index` (`0 ..< count`).
    ///
    /// - Complexity: O(log *n*).
    func element(at index: Int) -> (key: Key, value: Value) {
        precondition(index >= 0 && index < count, "index out of range")
        var node = root
        var remaining = index
        while !node.isLeaf {
            var childIndex = 0
            while remaining >= node.children[childIndex].count {
                remaining -= node.children[childIndex].count
                childIndex += 1
            }
            node = node.children[childIndex]
        }
        return (node.keys[remaining], node.values[remaining])
    }

    /// The element at `index`, or `nil` when `index` is out of range.
    func elementIfPresent(at index: Int) -> (key: Key, value: Value)? {
        index >= 0 && index < count ? element(at: index) : nil
    }

    /// Sum of the weights of the elements before position `index`.
    ///
    /// - Complexity: O(log *n*).
    func weight(before index: Int) -> Int {
        var node = root
        var remaining = index
        var weight = 0
        while !node.isLeaf {
            var childIndex = 0
            while childIndex < node.children.count, remaining >= node.children[childIndex].count {
                remaining -= node.children[childIndex].count
                weight += node.children[childIndex].weight
                childIndex += 1
            }
            if childIndex == node.children.count { return weight }
            node = node.children[childIndex]
        }
        for value in node.values[..<min(remaining, node.width)] { weight += value.treeWeight }
        return weight
    }

    /// Calls `body` with each element from position `start` on, in key order, until it returns `false`.
    ///
    /// - Complexity: O(log *n* + *k*) for *k* elements visited.
    func forEach(from start: Int = 0, _ body: (Key, Value) -> Bool) {
        guard start < count else { return }
        _ = Self.visit(root, skipping: max(start, 0), body)
    }

    private static func visit(_ node: Node, skipping: Int, _ body: (Key, Value) -> Bool) -> Bool {
        if node.isLeaf {
            for index in skipping..<node.width where !body(node.keys[index], node.values[index]) { return false }
            return true
        }
        var remaining = skipping
        for child in node.children {
            if remaining >= child.count {
                remaining -= child.count
                continue
            }
            if !visit(child, skipping: remaining, body) { return false }
            remaining = 0
        }
        return true
    }

    /// All values in key order.
    ///
    /// - Complexity: O(*n*).
    var values: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        forEach { _, value in
            result.append(value)
            return true
        }
        return result
    }

    /// The first key, or `nil` when empty.
    var firstKey: Key? { isEmpty ? nil : element(at: 0).key }
    /// The last key, or `nil` when empty.
    var lastKey: Key? { isEmpty ? nil : root.keys[root.width - 1] }
}
