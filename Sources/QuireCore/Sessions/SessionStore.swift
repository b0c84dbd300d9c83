import Synchronization

/// The sessions of every client: capped (the least recently used is evicted), idle ones expire, and
/// each update checks that nobody updated the session in between.
///
/// A large store is split in 16 stripes, each with its own lock, a session's by the hash of its id: two
/// requests of different sessions on two threads then rarely wait for each other, where one lock over all
/// sessions would be taken by every request under load. Eviction then takes the least recently used session of
/// a stripe, which holds 1/16th of the sessions: from 4,096 sessions up, where that is a few hundred, close to
/// the least recently used of all. A smaller store keeps one stripe and exact order.
///
/// The capacity is the store's, not a stripe's: a session is evicted only when the whole store is full. Ids are
/// random, so stripes fill unevenly (10,000 sessions put about 625 in a stripe, give or take 25), and a stripe
/// capped at its sixteenth would evict sessions of a store far from full, whose streams would then be refused
/// with `404`.
public final class SessionStore: Sendable {
    private let stripes: [Stripe]
    private let capacity: Int
    /// Held while an insertion evicts past the capacity, so that two insertions at once evict the store's excess
    /// once between them, not once each (lookups never take it).
    private let fullness = Mutex(())
    /// Sessions in all stripes, moved under each stripe's lock by what it added or removed.
    private let held = Atomic<Int>(0)
    private let clock: @Sendable () -> UInt64
    private let evictions = Atomic<Int>(0)
    private let expirations = Atomic<Int>(0)

    /// The lists the sessions are on, one pin per session (so that the registry keeps them in memory).
    private let pins: ListPins?
    /// Told the ids of the sessions evicted or expired (``observeRemovals(_:)``), so that what follows a session
    /// (its event stream) learns of its end without asking the store about every session in turn.
    private let removalObserver = Mutex<(@Sendable ([String]) -> Void)?>(nil)

    private final class Stripe: Sendable {
        let table: Mutex<LRUTable<SessionKey, Session>>

        init(capacity: Int, idleTimeout: UInt64, pins: ListPins?) {
            var unpin: (@Sendable (Session) -> Void)?
            if let pins { unpin = { session in pins.remove(session.list) } }
            table = Mutex(LRUTable(capacity: capacity, idleTimeout: idleTimeout, onRemove: unpin))
        }
    }

    /// The capacity from which the store is split in stripes, and how many (a power of two: a stripe is the
    /// hash's low bits).
    static let stripedFromCapacity = 4096
    static let stripeCount = 16

    /// - Parameters:
    ///   - capacity: the most sessions kept.
    ///   - idleSeconds: how long a session may go unused.
    ///   - clock: nanoseconds of a monotonic clock (injectable for tests).
    ///   - pins: where each session held pins its list (``ListRegistry/pins``), from its insertion until it is
    ///     removed, evicted or expired.
    public init(
        capacity: Int, idleSeconds: Double,
        clock: @escaping @Sendable () -> UInt64 = { MonotonicClock.nanoseconds }, pins: ListPins? = nil
    ) {
        let count = capacity >= Self.stripedFromCapacity ? Self.stripeCount : 1
        let idleTimeout = UInt64(idleSeconds * 1e9)
        self.pins = pins
        // Each stripe may hold the whole capacity: `insert` evicts when the store is full, whatever the stripe.
        stripes = (0..<count).map { _ in Stripe(capacity: capacity, idleTimeout: idleTimeout, pins: pins) }
        self.capacity = capacity
        self.clock = clock
    }

    private func stripe(of key: SessionKey) -> Stripe {
        // By the id's random bits: hashing the whole id cost as much as the stripe's own table lookup.
        stripes.count == 1 ? stripes[0] : stripes[Int(truncatingIfNeeded: key.bits) & (stripes.count - 1)]
    }

    /// Sessions evicted because the store was full, since start.
    public var evictionCount: Int { evictions.load(ordering: .relaxed) }
    /// Sessions that expired idle, since start.
    public var expirationCount: Int { expirations.load(ordering: .relaxed) }
    /// Sessions kept now.
    public var count: Int { held.load(ordering: .relaxed) }

    /// `body` on the table of `stripe`, under its lock, with ``held`` moved by what `body` added or removed (an
    /// insertion, an eviction, an expiry found on use): two loads on the path of a lookup.
    @inline(__always)
    private func withTable<Result>(
        of stripe: Stripe, _ body: (inout LRUTable<SessionKey, Session>) -> Result
    ) -> Result {
        let (result, change) = stripe.table.withLock { table in
            let before = table.count
            let result = body(&table)
            return (result, table.count - before)
        }
        if change != 0 { held.add(change, ordering: .relaxed) }
        return result
    }

    /// Adds a new session; past the store's capacity, evicts the least recently used session of its stripe (of the
    /// fullest stripe when the new session is alone in its own).
    ///
    /// - Complexity: O(1) amortized; O(stripes) when it evicts from another stripe.
    public func insert(_ session: Session) {
        let key = SessionKey(session.id)
        let stripe = stripe(of: key)
        pins?.add(session.list)
        var removed = withTable(of: stripe) { $0.insert(key, session, now: clock()) }
        if held.load(ordering: .relaxed) > capacity {
            removed.evicted += evictPastCapacity(from: stripe, sparing: key)
        }
        count(removed)
    }

    /// Evicts least recently used sessions while the store holds more than its capacity: from `stripe` (the one
    /// that just grew), else from the fullest stripe; never `key`, the session just inserted. One insertion at a
    /// time, so that two evict no more than the store's excess between them.
    private func evictPastCapacity(from stripe: Stripe, sparing key: SessionKey) -> [Session] {
        fullness.withLock { _ in
            var evicted: [Session] = []
            while held.load(ordering: .relaxed) > capacity {
                let session =
                    withTable(of: stripe) { $0.evictOldest(sparing: key) }
                    ?? withTable(of: fullestStripe()) { $0.evictOldest(sparing: key) }
                guard let session else { break }  // the store holds `key` alone: a capacity of 0 is refused
                evicted.append(session)
            }
            return evicted
        }
    }

    private func fullestStripe() -> Stripe {
        stripes.max { $0.table.withLock { $0.count } < $1.table.withLock { $0.count } }!
    }

    /// The session `id`, marked used; `nil` when unknown, expired, evicted or deleted.
    public func session(_ id: String) -> Session? {
        session(SessionKey(id))
    }

    /// The session of `key`, marked used; `nil` when unknown, expired, evicted or deleted.
    public func session(_ key: SessionKey) -> Session? {
        withTable(of: stripe(of: key)) { $0.use(key, now: clock()) }
    }

    /// Where a session stands: its `seq` and the version of its current window; marks it used, as ``session(_:)``
    /// does, without copying the session out (its windows retain each of their versions' tables).
    public func position(of key: SessionKey) -> (seq: UInt64, version: UInt64)? {
        withTable(of: stripe(of: key)) { table in
            table.use(key, now: clock()) { session in (session.seq, session.current.version.version) }
        }
    }

    /// Whether the session `id` is still there (not expired, evicted or deleted); does not mark it used.
    public func contains(_ id: String) -> Bool {
        let key = SessionKey(id)
        return stripe(of: key).table.withLock { $0.contains(key, now: clock()) }
    }

    /// Stores `session` if the stored one still has `expectedRevision`.
    ///
    /// - Returns: `false` when the session is gone or was updated by another request meanwhile.
    public func update(_ session: Session, expectedRevision: UInt64) -> Bool {
        let key = SessionKey(session.id)
        return withTable(of: stripe(of: key)) { table in
            // The clock is read under the lock, so that uses are stamped in order (see LRUTable.isIdle).
            // In place: the stored session is neither copied out nor looked up twice.
            table.modify(key, now: clock()) { stored in
                guard stored.revision == expectedRevision else { return false }
                stored = session
                return true
            } ?? false
        }
    }

    /// Removes a session; `false` when it was not there.
    @discardableResult
    public func remove(_ id: String) -> Bool {
        let key = SessionKey(id)
        return withTable(of: stripe(of: key)) { $0.remove(key) } != nil
    }

    /// Removes every session of `list` (the list was deleted), on the list itself or on one of its views.
    ///
    /// - Complexity: O(*n*) in the number of sessions.
    public func removeAll(of list: String) {
        for stripe in stripes {
            _ = withTable(of: stripe) { $0.removeAll { $0.list == list || ViewName.list(of: $0.list) == list } }
        }
    }

    /// Removes every session (the service is stopping: its sessions end with it).
    ///
    /// - Complexity: O(*n*) in the number of sessions.
    public func removeAll() {
        for stripe in stripes {
            _ = withTable(of: stripe) { $0.removeAll { _ in true } }
        }
    }

    /// Drops the sessions idle for too long.
    public func sweep() {
        for stripe in stripes { count(withTable(of: stripe) { $0.sweep(now: clock()) }) }
    }

    /// Calls `observer` with the ids of the sessions evicted (past the capacity) or expired (found idle by
    /// ``sweep()`` or by an insertion), after the store's locks are released; removals asked for (``remove(_:)``,
    /// ``removeAll(of:)``) are the asker's to tell. One observer: a later call replaces it.
    public func observeRemovals(_ observer: @escaping @Sendable ([String]) -> Void) {
        removalObserver.withLock { $0 = observer }
    }

    private func count(_ removed: LRUTable<SessionKey, Session>.Removed) {
        if !removed.evicted.isEmpty { evictions.add(removed.evicted.count, ordering: .relaxed) }
        if !removed.expired.isEmpty { expirations.add(removed.expired.count, ordering: .relaxed) }
        guard !removed.evicted.isEmpty || !removed.expired.isEmpty,
            let observer = removalObserver.withLock({ $0 })
        else { return }
        observer(removed.evicted.map(\.id) + removed.expired.map(\.id))
    }
}
