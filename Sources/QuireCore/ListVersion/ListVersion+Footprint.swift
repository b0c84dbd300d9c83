extension ListVersion {
    /// Estimated heap bytes held by `versions` together, every node and buffer they share counted once:
    /// how much keeping these versions alive costs.
    ///
    /// Each object and array buffer counts its header, its stored fields or capacity, and the allocator's
    /// rounding; the id table, shared by the whole lineage, is not counted.
    ///
    /// - Complexity: O(*u*) in the number of distinct nodes.
    public static func estimatedFootprint(of versions: [ListVersion]) -> Int {
        var counter = FootprintCounter(deduplicating: versions.count > 1)
        for version in versions {
            counter.count(version.sections.root) { counter, section in counter.count(section) }
            counter.count(version.sectionIndex.root) { counter, label in counter.count(label) }
            counter.count(version.itemIndex.root) { counter, location in counter.count(location.label) }
        }
        return counter.bytes
    }
}

/// Walks nodes once each, adding up their estimated sizes.
///
/// Several versions of a list share most of their nodes and buffers: each is counted once (sets of their
/// identities). One version's trees share none (a node or an item's buffer is in one place of one tree), so a walk
/// of one version, which the registry makes as lists grow, skips the sets and their hashing. The one empty tree that
/// every item without children holds (``ItemNode/noChildren``) is never counted: no list frees it.
struct FootprintCounter {
    private let deduplicating: Bool
    private var seen = Set<ObjectIdentifier>()
    private var seenBuffers = Set<UnsafeRawPointer>()
    private(set) var bytes = 0

    init(deduplicating: Bool) {
        self.deduplicating = deduplicating
    }

    /// Whether `object` is counted now: not counted before (when deduplicating).
    private mutating func isNew(_ object: AnyObject) -> Bool {
        !deduplicating || seen.insert(ObjectIdentifier(object)).inserted
    }

    /// Bytes malloc hands out for a request of `size`: 8 bytes of header, rounded up to 16.
    private static func allocation(_ size: Int) -> Int { (size + 8 + 15) & ~15 }
    private static let objectHeader = 16

    mutating func count<Key, Value>(
        _ node: TreeNode<Key, Value>, values: (inout FootprintCounter, Value) -> Void
    ) {
        guard node !== ItemNode.noChildren.root, isNew(node) else { return }
        bytes += Self.allocation(Self.objectHeader + 3 * 8 + 2 * 8 + 8)
        countBuffer(node.keys)
        if node.isLeaf {
            countBuffer(node.values)
            for value in node.values { values(&self, value) }
        } else {
            countBuffer(node.children)
            for child in node.children { count(child, values: values) }
        }
    }

    mutating func count(_ section: SectionNode) {
        guard isNew(section) else { return }
        bytes += Self.allocation(Self.objectHeader + 4 + 16 + 4 * 8 + 8)
        countBuffer(section.quotedID)
        if let header = section.header { countBuffer(header) }
        if let footer = section.footer { countBuffer(footer) }
        count(section.items.root) { counter, item in counter.count(item) }
    }

    mutating func count(_ item: ItemNode) {
        guard isNew(item) else { return }
        bytes += Self.allocation(Self.objectHeader + 8 + 16 + 8 + 8 + 8 + 8)
        if item.id.utf8.count > 15 { bytes += Self.allocation(32 + item.id.utf8.count) }
        countBuffer(item.encoded)
        count(item.children.root) { counter, child in counter.count(child) }
    }

    mutating func count(_ label: OrderLabel) {
        if !label.tail.isEmpty { countBuffer(label.tail) }
    }

    /// An array's buffer, once however many arrays share it.
    private mutating func countBuffer<Element>(_ array: [Element]) {
        guard array.capacity > 0 else { return }
        if deduplicating {
            let address = array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress!) }
            guard seenBuffers.insert(address).inserted else { return }
        }
        bytes += Self.allocation(32 + array.capacity * MemoryLayout<Element>.stride)
    }
}
