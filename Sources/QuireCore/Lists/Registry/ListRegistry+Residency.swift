import Synchronization

extension ListRegistry {
    // MARK: - The budget and the idle release

    /// Makes lists leave memory, the least recently used unpinned first, until the held bytes are within the
    /// budget; one caller at a time (the others go on: the one running brings the count down for them). A list
    /// whose lock is busy (a write, a load) is in use: passed over. Every load and write calls it; call it when
    /// pins were released (sessions ended) to know whether ``isOverBudget`` still holds.
    public func enforceBudget() {
        guard memoryBudget > 0 else { return }
        guard heldBytes.load(ordering: .relaxed) > memoryBudget else {
            if overBudget.load(ordering: .relaxed) { overBudget.store(false, ordering: .relaxed) }
            return
        }
        guard !evicting.exchange(true, ordering: .acquiring) else { return }
        defer { evicting.store(false, ordering: .releasing) }
        var passedOver = 0
        while true {
            let (bytes, victim) = residents.withLock { residents in
                (residents.bytes, residents.bytes > memoryBudget ? residents.nextVictim(pins: pins) : nil)
            }
            guard bytes > memoryBudget else {
                overBudget.store(false, ordering: .relaxed)
                return
            }
            guard let victim, passedOver <= 2 * resident.lists else {
                overBudget.store(true, ordering: .relaxed)
                return
            }
            if evict(victim.name, victim.handle) {
                evictions.add(1, ordering: .relaxed)
            } else {
                passedOver += 1
            }
        }
    }

    /// Makes the lists leave memory that no request used (no read, no write here) and no session held for
    /// ``idleTimeout`` until `now`: called about once a second (the service's housekeeping). A list whose lock is
    /// busy is in use: passed over. Nothing when ``idleTimeout`` is `nil`.
    ///
    /// - Complexity: O(*n*) for the *n* lists held.
    public func releaseIdle(now: ContinuousClock.Instant = .now) {
        guard let idleTimeout else { return }
        let idle = residents.withLock { $0.unrequested(for: idleTimeout, now: now, pins: pins) }
        for (name, handle) in idle where evict(name, handle) {
            idleReleases.add(1, ordering: .relaxed)
        }
    }

    /// `name` leaves memory if it is still held with `handle`, unpinned and its lock free; `false` otherwise.
    private func evict(_ name: String, _ handle: ListHandle) -> Bool {
        guard let lock = writers.withLock({ $0[name] }) else { return false }
        return lock.state.withLockIfAvailable { state -> Bool in
            guard !state.retired else { return false }
            // Pins are read under the residents' lock, as a session's creation reads the list after pinning it.
            let removed = residents.withLock { residents in
                guard residents.entries[name]?.handle === handle, !pins.isPinned(name) else { return false }
                residents.remove(name)
                heldBytes.store(residents.bytes, ordering: .relaxed)
                return true
            }
            guard removed else { return false }
            state.retired = true
            writers.withLock { locks in if locks[name] === lock { locks[name] = nil } }
            return true
        } ?? false
    }

    // MARK: - Handles

    /// A list as a cache of what is made from its versions holds it: whether the version something was made
    /// from is still the list's current one is one atomic load, with no lookup of the list by its name.
    ///
    /// A list's handle lasts as long as the list stays in memory: the list deleted or out of memory, its handle
    /// is retired (never current again), and the list created again or loaded again under the name has a new one.
    public final class ListHandle: Sendable {
        private let generation = Atomic<UInt64>(0)
        /// Set by every use: ``clockUse`` cleared by the eviction's hand as it passes (a second chance),
        /// ``requestUse`` (a request, not replication) by the idle release's pass.
        private let uses = Atomic<UInt8>(ListHandle.clockUse | ListHandle.requestUse)
        private static let clockUse: UInt8 = 1
        private static let requestUse: UInt8 = 2

        /// The generation of the list's current version: numbered process-wide, so that no two versions of any
        /// lists share one; 0 once the list is gone.
        public var currentGeneration: UInt64 { generation.load(ordering: .acquiring) }

        /// Whether `generation` is the list's current one; counts as a use of the list when it is (a cache
        /// answering from it keeps the list in memory).
        public func isCurrent(_ generation: UInt64) -> Bool {
            guard self.generation.load(ordering: .acquiring) == generation else { return false }
            markUsed()
            return true
        }

        /// The list was used by a request: the eviction's hand passes it over once, and it is not idle. A load
        /// before the store, so that lists in constant use do not write the same cache line from every thread.
        public func markUsed() {
            mark(Self.clockUse | Self.requestUse)
        }

        /// The list was read by something else than a request (replication, an observer): only the eviction's
        /// hand passes it over once.
        fileprivate func markSeen() {
            mark(Self.clockUse)
        }

        private func mark(_ bits: UInt8) {
            if uses.load(ordering: .relaxed) & bits != bits { uses.bitwiseOr(bits, ordering: .relaxed) }
        }

        /// Whether the list was used since the last call (and clears the mark).
        fileprivate func takeUse() -> Bool {
            take(Self.clockUse)
        }

        /// Whether a request used the list since the last call (and clears the mark).
        fileprivate func takeRequest() -> Bool {
            take(Self.requestUse)
        }

        private func take(_ bit: UInt8) -> Bool {
            uses.load(ordering: .relaxed) & bit != 0 && uses.bitwiseAnd(~bit, ordering: .relaxed).oldValue & bit != 0
        }

        /// The list has a new current version: its generation, the next process-wide.
        fileprivate func advance() {
            generation.store(Self.generations.add(1, ordering: .relaxed).newValue, ordering: .releasing)
        }

        fileprivate func retire() {
            generation.store(0, ordering: .releasing)
        }

        private static let generations = Atomic<UInt64>(0)
    }
}

// MARK: - The lists held and the eviction's ring

/// The lists held in memory: each one's current version, handle (advanced with every version it is given) and
/// footprint, with their total; and the ring the eviction's hand goes round (CLOCK).
struct Residents {
    struct Entry {
        var version: ListVersion
        let handle: ListRegistry.ListHandle
        var footprint: ListFootprint
        /// When the idle release last found the list requested or held by a session (or it came in).
        var usedAt = ContinuousClock.now
    }

    private(set) var entries: [String: Entry] = [:]
    private(set) var bytes = 0
    private(set) var items = 0
    /// Every list held, in the order they came in (a list that left and came back has a new handle: its old
    /// place is stale and dropped when the hand reaches it).
    private var ring: [(name: String, handle: ListRegistry.ListHandle)] = []
    private var hand = 0

    /// The entry of `name`, marked used: by a request (`requested`), or only seen (replication, observers: the
    /// eviction's hand passes it over once, but it may still go idle).
    func used(_ name: String, requested: Bool = false) -> Entry? {
        guard let index = entries.index(forKey: name) else { return nil }
        let entry = entries.values[index]
        if requested { entry.handle.markUsed() } else { entry.handle.markSeen() }
        return entry
    }

    /// Marks `name` requested, as ``used(_:requested:)`` does, without copying its entry out: a write's mark of its
    /// list, which needs nothing of the entry (a copy retains and releases each of its version's tables).
    func markRequested(_ name: String) {
        guard let index = entries.index(forKey: name) else { return }
        entries.values[index].handle.markUsed()
    }

    /// The lists that no request used and no session held for `idle` until `now` (the others' time of use
    /// moved to `now` when they were used since the last call).
    ///
    /// - Complexity: O(*n*) for the *n* lists held.
    mutating func unrequested(for idle: Duration, now: ContinuousClock.Instant, pins: ListPins)
        -> [(name: String, handle: ListRegistry.ListHandle)]
    {
        var found: [(name: String, handle: ListRegistry.ListHandle)] = []
        var index = entries.values.startIndex
        while index != entries.values.endIndex {
            let (name, entry) = entries[index]
            if entry.handle.takeRequest() || pins.isPinned(name) {
                entries.values[index].usedAt = now
            } else if now - entry.usedAt >= idle {
                found.append((name, entry.handle))
            }
            entries.values.formIndex(after: &index)
        }
        return found
    }

    mutating func set(_ name: String, _ version: ListVersion, footprint: ListFootprint) {
        if var entry = entries.removeValue(forKey: name) {
            bytes += footprint.bytes - entry.footprint.bytes
            items += version.itemCount - entry.version.itemCount
            entry.version = version
            entry.footprint = footprint
            entry.handle.advance()
            entries[name] = entry
        } else {
            let handle = ListRegistry.ListHandle()
            handle.advance()
            entries[name] = Entry(version: version, handle: handle, footprint: footprint)
            bytes += footprint.bytes
            items += version.itemCount
            ring.append((name, handle))
            compactRing()
        }
    }

    mutating func remove(_ name: String) {
        guard let entry = entries.removeValue(forKey: name) else { return }
        bytes -= entry.footprint.bytes
        items -= entry.version.itemCount
        entry.handle.retire()
    }

    /// The next list the hand finds neither used since it last passed nor pinned; after two turns of the ring
    /// without one (every list in constant use), the next list not pinned; `nil` when every list is pinned.
    ///
    /// - Complexity: O(1) amortized per list passed.
    mutating func nextVictim(pins: ListPins) -> (name: String, handle: ListRegistry.ListHandle)? {
        var passed = 0
        while !ring.isEmpty && passed < 3 * ring.count {
            if hand >= ring.count { hand = 0 }
            let (name, handle) = ring[hand]
            guard entries[name]?.handle === handle else {
                ring.swapAt(hand, ring.count - 1)
                ring.removeLast()
                continue
            }
            passed += 1
            hand += 1
            let secondChance = passed <= 2 * ring.count && handle.takeUse()
            if secondChance || pins.isPinned(name) { continue }
            return (name, handle)
        }
        return nil
    }

    /// Drops the ring's stale places (lists that left memory or were deleted) once they are half of it, so that
    /// the ring follows the lists held even while nothing is evicted.
    private mutating func compactRing() {
        guard ring.count > 2 * entries.count + 64 else { return }
        ring.removeAll { entries[$0.name]?.handle !== $0.handle }
        hand = 0
    }
}
