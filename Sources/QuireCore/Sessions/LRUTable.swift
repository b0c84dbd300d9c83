/// A table of values by key, ordered by last use, with a capacity and an idle timeout: the
/// least recently used entry is evicted past the capacity, and entries idle for longer than the timeout
/// are gone. A value type: wrap it in a lock to share it.
///
/// Entries live in a slot array linked in use order (most recent at the head), so lookups, touches,
/// inserts and evictions are O(1) and expiry costs O(1) per expired entry.
public struct LRUTable<Key: Hashable, Value> {
    fileprivate struct Slot {
        /// `nil` in a free slot.
        var key: Key?
        var value: Value?
        var lastUse: UInt64
        var newer: Int = -1
        var older: Int = -1
    }

    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var index: [Key: Int] = [:]
    private var newest = -1
    private var oldest = -1

    /// The most entries kept; inserting past it evicts the least recently used.
    public let capacity: Int
    /// How long (in the caller's time unit, e.g. nanoseconds) an entry may stay unused.
    public let idleTimeout: UInt64

    /// Called with every value that leaves the table, however it leaves (evicted, expired, removed), inside the
    /// mutating call that removes it.
    private let onRemove: (@Sendable (Value) -> Void)?

    /// - Parameter onRemove: called with every value that leaves the table (an eviction, an expiry, a removal).
    public init(capacity: Int, idleTimeout: UInt64, onRemove: (@Sendable (Value) -> Void)? = nil) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
        self.idleTimeout = idleTimeout
        self.onRemove = onRemove
    }

    public var count: Int { index.count }

    /// What an insertion or an expiry sweep removed.
    public struct Removed {
        public var evicted: [Value] = []
        public var expired: [Value] = []
    }

    /// The value for `key` if present and not idle past the timeout at `now`; marks it used.
    ///
    /// - Complexity: O(1).
    public mutating func use(_ key: Key, now: UInt64) -> Value? {
        use(key, now: now) { copy $0 }
    }

    /// As ``use(_:now:)``, but reads what it needs of the value in place instead of copying the value out.
    ///
    /// - Complexity: O(1) besides `read`.
    public mutating func use<Result>(_ key: Key, now: UInt64, reading read: (borrowing Value) -> Result) -> Result? {
        guard let slot = usedSlot(key, now: now) else { return nil }
        return read(slots[slot].value!)  // an occupied slot has a value
    }

    /// Uses the value for `key` as ``use(_:now:)`` does, but gives it in place to `body`, which may change it
    /// (replace it, or leave it as it is): one lookup, and no copy of the value.
    ///
    /// - Complexity: O(1) besides `body`.
    public mutating func modify<Result>(_ key: Key, now: UInt64, _ body: (inout Value) -> Result) -> Result? {
        guard let slot = usedSlot(key, now: now) else { return nil }
        return body(&slots[slot].value!)  // an occupied slot has a value
    }

    /// The slot of `key`, marked used at `now`; `nil` when absent, or idle past the timeout (then removed).
    private mutating func usedSlot(_ key: Key, now: UInt64) -> Int? {
        guard let slot = index[key] else { return nil }
        if isIdle(slot, now: now) {
            _ = remove(slot: slot)
            return nil
        }
        slots[slot].lastUse = max(slots[slot].lastUse, now)
        moveToNewest(slot)
        return slot
    }

    /// Whether `key` is present and not idle past the timeout at `now`; does not mark it used.
    ///
    /// - Complexity: O(1).
    public func contains(_ key: Key, now: UInt64) -> Bool {
        guard let slot = index[key] else { return false }
        return !isIdle(slot, now: now)
    }

    /// Whether the entry in `slot` was last used more than the idle timeout before `now`. A `now` older
    /// than the last use (a clock read before another thread's use of the same entry) is no idleness: an
    /// unsigned difference would wrap around and expire an entry in use.
    private func isIdle(_ slot: Int, now: UInt64) -> Bool {
        let lastUse = slots[slot].lastUse
        return now > lastUse && now - lastUse > idleTimeout
    }

    /// Inserts a new entry as the most recently used; evicts the least recently used past the capacity.
    ///
    /// - Precondition: `key` is not in the table.
    /// - Complexity: O(1) amortized.
    public mutating func insert(_ key: Key, _ value: Value, now: UInt64) -> Removed {
        precondition(index[key] == nil, "key inserted twice")
        var removed = sweep(now: now)
        while index.count >= capacity, oldest >= 0 {
            if let value = remove(slot: oldest) { removed.evicted.append(value) }
        }
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = Slot(key: key, value: value, lastUse: now)
        } else {
            slot = slots.count
            slots.append(Slot(key: key, value: value, lastUse: now))
        }
        index[key] = slot
        link(slot)
        return removed
    }

    /// Evicts the least recently used entry, unless that is `key` (the entry just inserted); returns its value.
    ///
    /// - Complexity: O(1).
    public mutating func evictOldest(sparing key: Key) -> Value? {
        guard oldest >= 0, slots[oldest].key != key else { return nil }
        return remove(slot: oldest)
    }

    /// Removes an entry; returns its value.
    ///
    /// - Complexity: O(1).
    @discardableResult
    public mutating func remove(_ key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        return remove(slot: slot)
    }

    /// Removes every entry idle past the timeout at `now`.
    ///
    /// - Complexity: O(*e*) for *e* expired entries.
    public mutating func sweep(now: UInt64) -> Removed {
        var removed = Removed()
        while oldest >= 0, isIdle(oldest, now: now) {
            if let value = remove(slot: oldest) { removed.expired.append(value) }
        }
        return removed
    }

    /// Removes every entry for which `predicate` holds.
    ///
    /// - Complexity: O(*n*).
    public mutating func removeAll(where predicate: (Value) -> Bool) -> [Value] {
        let matching = index.values.filter { slots[$0].value.map(predicate) ?? false }
        return matching.compactMap { remove(slot: $0) }
    }

    /// The keys from the most to the least recently used (for tests and diagnostics).
    ///
    /// - Complexity: O(*n*).
    public var keysByRecency: [Key] {
        var keys: [Key] = []
        var slot = newest
        while slot >= 0 {
            keys.append(slots[slot].key!)
            slot = slots[slot].older
        }
        return keys
    }

    private mutating func remove(slot: Int) -> Value? {
        unlink(slot)
        index[slots[slot].key!] = nil
        let value = slots[slot].value
        slots[slot].value = nil
        slots[slot].key = nil
        freeSlots.append(slot)
        if let onRemove, let value { onRemove(value) }
        return value
    }

    private mutating func moveToNewest(_ slot: Int) {
        guard newest != slot else { return }
        unlink(slot)
        link(slot)
    }

    private mutating func link(_ slot: Int) {
        slots[slot].older = newest
        slots[slot].newer = -1
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (slots[slot].newer, slots[slot].older)
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        slots[slot].newer = -1
        slots[slot].older = -1
    }
}

extension LRUTable: Sendable where Key: Sendable, Value: Sendable {}
extension LRUTable.Slot: Sendable where Key: Sendable, Value: Sendable {}
