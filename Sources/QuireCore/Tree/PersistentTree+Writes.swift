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
        let leafFill = Self.fill(leaf: true)
        let branchFill = Self.fill(leaf: false)
        level.reserveCapacity(keys.count / leafFill + 1)
        var start = 0
        while start < keys.count {
            let end = min(start + leafFill, keys.count)
            level.append(Node(keys: Array(keys[start..<end]), values: Array(values[start..<end])))
            start = end
        }
        while level.count > 1 {
            var next: [Node] = []
            var index = 0
            while index < level.count {
                let end = min(index + branchFill, level.count)
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
            let keys: [Key]
            var values: [Value]
            let weight: Int
            if index < node.keys.count, node.keys[index] == key {
                keys = node.keys
                values = node.values
                weight = node.weight - values[index].treeWeight + value.treeWeight
                values[index] = value
            } else {
                keys = copying(node.keys, inserting: key, at: index)
                values = copying(node.values, inserting: value, at: index)
                weight = node.weight + value.treeWeight
            }
            if keys.count <= capacity(leaf: true) { return (Node(keys: keys, values: values, weight: weight), nil) }
            let half = keys.count / 2
            return (
                Node(keys: Array(keys[..<half]), values: Array(values[..<half])),
                Node(keys: Array(keys[half...]), values: Array(values[half...]))
            )
        }
        if index == node.width { index -= 1 }
        let (left, right) = inserting(value, for: key, into: node.children[index])
        guard let right else { return (Node(replacing: index, of: node, with: left), nil) }
        var children = copying(node.children, inserting: right, at: index + 1)
        children[index] = left
        if children.count <= capacity(leaf: false) { return (Node(children: children), nil) }
        let half = children.count / 2
        return (Node(children: Array(children[..<half])), Node(children: Array(children[half...])))
    }

    private static func removing(_ key: Key, from node: Node) -> (Node, Value)? {
        let index = lowerBound(node.keys, key)
        guard index < node.width else { return nil }
        if node.isLeaf {
            guard node.keys[index] == key else { return nil }
            let removed = node.values[index]
            return (
                Node(
                    keys: copying(node.keys, removingAt: index), values: copying(node.values, removingAt: index),
                    weight: node.weight - removed.treeWeight),
                removed
            )
        }
        guard let (child, removed) = removing(key, from: node.children[index]) else { return nil }
        guard child.width < minimum(leaf: child.isLeaf) else {
            return (Node(replacing: index, of: node, with: child), removed)
        }
        var children = node.children
        children[index] = child
        rebalance(&children, at: index)
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
            if keys.count <= capacity(leaf: true) {
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
            if grandchildren.count <= capacity(leaf: false) {
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

/// `elements` with `element` inserted at `index`, in one new buffer of the final size: `Array.insert` on a copy
/// (the node's arrays are shared with the tree it came from) would copy into a buffer of the same size and then
/// grow it, two allocations and two copies per array of every node on a write's path.
@inline(__always)
private func copying<Element>(_ elements: [Element], inserting element: Element, at index: Int) -> [Element] {
    var result: [Element] = []
    result.reserveCapacity(elements.count + 1)
    result.append(contentsOf: elements[..<index])
    result.append(element)
    result.append(contentsOf: elements[index...])
    return result
}

/// `elements` without the element at `index`, in one new buffer (see ``copying(_:inserting:at:)``).
@inline(__always)
private func copying<Element>(_ elements: [Element], removingAt index: Int) -> [Element] {
    var result: [Element] = []
    result.reserveCapacity(elements.count - 1)
    result.append(contentsOf: elements[..<index])
    result.append(contentsOf: elements[(index + 1)...])
    return result
}
