/// What one committed write changed, in the keys of the list's id table: enough for a session to find
/// the few places where its window can differ, without comparing the window item by item.
///
/// A key listed here *may* have changed; a key not listed did not: the item kept its node (content and
/// children count), its container and its place among its siblings. That one-sided promise is what the
/// incremental diff relies on (``ListVersion/sparseTransition(from:expanded:extend:bound:)``).
struct VersionDelta: Sendable {
    /// Items inserted, removed, updated, moved (with their whole subtree) or whose children changed.
    var items: [Int32] = []
    /// Sections inserted or removed (their items are not listed: a section that comes or goes is diffed
    /// as a whole).
    var replacedSections: [Int32] = []
    /// Sections whose header or footer changed.
    var updatedSections: [Int32] = []
    /// A section moved: the relative order of sections changed.
    var reordersSections = false

    var isEmpty: Bool {
        items.isEmpty && replacedSections.isEmpty && updatedSections.isEmpty && !reordersSections
    }

    /// Keys recorded, for the log's bound.
    var size: Int { items.count + replacedSections.count + updatedSections.count }
}

/// The deltas of a list's recent versions, carried by every version (shared, copy on write): a session
/// whose window is at a version the log still covers learns what changed since, in O(changes).
///
/// Bounded: at most ``maximumEntries`` versions and ``maximumKeys`` recorded keys. Past either bound the
/// oldest entries go; a version built by a replacement (`PUT`) or loaded from storage starts a new log.
/// Sessions at a version the log no longer covers are answered with the full window diff.
struct ChangeLog: Sendable {
    static let maximumEntries = 256
    static let maximumKeys = 16_384
    /// Entries per chunk: a write copies the open chunk alone (the full ones are shared with the version it was
    /// built on, and their list is copied once a chunk fills), not the whole log.
    private static let chunkSize = 16

    /// The oldest version the log reaches back to: changes since any version ≥ `base` are known.
    private(set) var base: UInt64
    /// Deltas of versions `base + 1 …`, oldest first: the entries of the full chunks after the first `dropped`,
    /// then those of `open`.
    private var full: [[VersionDelta]] = []
    private var open: [VersionDelta] = []
    private var dropped = 0
    private var count = 0
    private var keyCount = 0

    /// A log that knows nothing before `version`.
    init(base version: UInt64) {
        base = version
    }

    /// The log with `delta` recorded as the change that built version `version` (= the last one + 1).
    ///
    /// - Complexity: O(16) amortized: the open chunk is copied, and the list of full chunks once every 16 writes.
    func appending(_ delta: VersionDelta, version: UInt64) -> ChangeLog {
        guard delta.size <= Self.maximumKeys, version == base + UInt64(count) + 1 else {
            return ChangeLog(base: version)
        }
        var next = self
        if next.open.count == Self.chunkSize {
            next.full.append(next.open)
            next.open = []
        }
        if next.open.isEmpty { next.open.reserveCapacity(Self.chunkSize) }
        next.open.append(delta)
        next.count += 1
        next.keyCount += delta.size
        while next.count > Self.maximumEntries || next.keyCount > Self.maximumKeys {
            next.dropOldest()
        }
        return next
    }

    /// Forgets the oldest entry: of the first full chunk, or of the open one when no chunk is full (a key bound
    /// reached within 16 entries).
    private mutating func dropOldest() {
        let first = full.first ?? open
        count -= 1
        base += 1
        keyCount -= first[dropped].size
        dropped += 1
        guard dropped == first.count else { return }
        dropped = 0
        if full.isEmpty { open = [] } else { full.removeFirst() }
    }

    /// The union of the changes after `version` up to the latest, or `nil` when the log does not reach
    /// back that far.
    ///
    /// - Complexity: O(*c*) in the keys recorded since `version`.
    func changes(since version: UInt64) -> CombinedDelta? {
        guard version >= base, version <= base + UInt64(count) else { return nil }
        var combined = CombinedDelta()
        var skip = dropped + Int(version - base)
        func add(_ chunk: [VersionDelta]) {
            guard skip < chunk.count else {
                skip -= chunk.count
                return
            }
            for delta in chunk[skip...] {
                combined.items.formUnion(delta.items)
                combined.replacedSections.formUnion(delta.replacedSections)
                combined.updatedSections.formUnion(delta.updatedSections)
                combined.reordersSections = combined.reordersSections || delta.reordersSections
            }
            skip = 0
        }
        for chunk in full { add(chunk) }
        add(open)
        return combined
    }
}

/// The changes of several consecutive versions, as sets.
struct CombinedDelta {
    var items = Set<Int32>()
    var replacedSections = Set<Int32>()
    var updatedSections = Set<Int32>()
    var reordersSections = false
}

extension ListVersion {
    /// Records that the item `key` may have changed (see ``VersionDelta``).
    mutating func touch(_ key: Int32) {
        pendingDelta.items.append(key)
    }

    /// Records an item and every item below it: they all move when it moves.
    mutating func touchSubtree(_ node: ItemNode) {
        touch(node.key)
        node.children.forEach { _, child in
            touchSubtree(child)
            return true
        }
    }
}
