/// A value stored in a ``PersistentTree``: its weight is summed in every node, so that the tree can
/// answer "how much weight lies before element *i*" in O(log *n*).
protocol TreeValue: Sendable {
    var treeWeight: Int { get }
}

/// One node of a ``PersistentTree``. Immutable once built: every write copies the path from the root to
/// the changed leaf and shares every other node with the tree it came from.
final class TreeNode<Key: Comparable & Sendable, Value: TreeValue>: Sendable {
    /// In a leaf, the elements' keys; in an inner node, the largest key of each child.
    let keys: [Key]
    /// The elements' values (leaves only).
    let values: [Value]
    /// The children (inner nodes only).
    let children: [TreeNode<Key, Value>]
    /// Elements in this subtree.
    let count: Int
    /// Sum of the elements' weights in this subtree.
    let weight: Int
    let isLeaf: Bool

    convenience init(keys: [Key], values: [Value]) {
        var weight = 0
        for value in values { weight += value.treeWeight }
        self.init(keys: keys, values: values, weight: weight)
    }

    /// A leaf whose weight the caller knows (the leaf it replaces, give or take one element): a write then reads
    /// only the element it changes, not every value of the leaf.
    init(keys: [Key], values: [Value], weight: Int) {
        self.keys = keys
        self.values = values
        self.children = []
        self.count = keys.count
        self.weight = weight
        self.isLeaf = true
    }

    init(children: [TreeNode<Key, Value>]) {
        var keys: [Key] = []
        keys.reserveCapacity(children.count)
        var count = 0
        var weight = 0
        for child in children {
            keys.append(child.keys[child.keys.count - 1])
            count += child.count
            weight += child.weight
        }
        self.keys = keys
        self.values = []
        self.children = children
        self.count = count
        self.weight = weight
        self.isLeaf = false
    }

    /// An inner node whose keys, count and weight the caller knows: `node` with its child at `index` replaced by
    /// `child` (a write's path copy). Summing them from the children, as ``init(children:)`` does, would read every
    /// child of the node, each a cache miss across many lists, where the write changed one.
    init(replacing index: Int, of node: TreeNode, with child: TreeNode) {
        let old = node.children[index]
        var children = node.children
        children[index] = child
        var keys = node.keys
        keys[index] = child.keys[child.keys.count - 1]
        self.keys = keys
        self.values = []
        self.children = children
        self.count = node.count - old.count + child.count
        self.weight = node.weight - old.weight + child.weight
        self.isLeaf = false
    }

    /// Entries in this node itself: elements of a leaf, children of an inner node.
    var width: Int { keys.count }
}

/// A persistent B+-tree: a sorted map from `Key` to `Value` whose copies share structure.
///
/// Writes cost O(log *n*) time and allocate O(log *n*) memory (the copied path); reads are O(log *n*)
/// by key or by position. Values are `Sendable` and nodes immutable, so any number of threads can read
/// one tree while another builds the next version from it.
struct PersistentTree<Key: Comparable & Sendable, Value: TreeValue>: Sendable {
    typealias Node = TreeNode<Key, Value>

    /// The most entries in one node: a leaf of values without references (`_isPOD`, copied as bytes) holds 64; a
    /// leaf of objects and every inner node hold 16. A write copies one node per level, and copying an entry that
    /// is an object retains it, touching that object's memory (and the old node's release touches it again):
    /// across many lists those objects are not in the cache, so a copy costs a cache miss per reference, and
    /// narrow nodes of references copy far fewer of them for one more level or two.
    @inline(__always)
    static func capacity(leaf: Bool) -> Int { leaf && _isPOD(Value.self) ? 64 : 16 }
    /// A node with fewer entries than this is merged with a neighbour.
    @inline(__always)
    static func minimum(leaf: Bool) -> Int { capacity(leaf: leaf) / 4 }
    /// How full bulk-built nodes are.
    @inline(__always)
    static func fill(leaf: Bool) -> Int { capacity(leaf: leaf) * 3 / 4 }

    var root: Node

    /// An empty tree.
    init() {
        root = Node(keys: [], values: [])
    }

    init(root: Node) {
        self.root = root
    }

    /// Number of elements.
    var count: Int { root.count }
    /// Sum of the elements' weights.
    var weight: Int { root.weight }
    var isEmpty: Bool { root.count == 0 }

    /// Index of the first key in `keys` not less than `key`.
    @inline(__always)
    static func lowerBound(_ keys: [Key], _ key: Key) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) >> 1
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
