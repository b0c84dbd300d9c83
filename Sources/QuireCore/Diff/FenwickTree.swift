/// Counts of active slots with prefix sums in O(log *n*): where an item is while a sequence of
/// one-at-a-time operations is being written.
struct FenwickTree {
    private var tree: [Int32]

    /// A tree over `counts.count` slots (each 0 or 1).
    ///
    /// - Complexity: O(*n*).
    init(counts: [Int32]) {
        tree = counts
        tree.withUnsafeMutableBufferPointer { tree in
            for index in tree.indices {
                let parent = index | (index + 1)
                if parent < tree.count { tree[parent] += tree[index] }
            }
        }
    }

    /// Adds `delta` to slot `index`.
    ///
    /// - Complexity: O(log *n*).
    mutating func add(_ delta: Int32, at index: Int) {
        var cursor = index
        while cursor < tree.count {
            tree[cursor] += delta
            cursor |= cursor + 1
        }
    }

    /// Active slots before `index`.
    ///
    /// - Complexity: O(log *n*).
    func prefix(_ index: Int) -> Int {
        var sum: Int32 = 0
        var cursor = index - 1
        while cursor >= 0 {
            sum += tree[cursor]
            cursor = (cursor & (cursor + 1)) - 1
        }
        return Int(sum)
    }
}
