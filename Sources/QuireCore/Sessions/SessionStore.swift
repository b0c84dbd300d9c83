import Synchronization

/// The sessions of every client: capped (the least recently used is evicted), idle ones expire, and
/// each update checks that nobody updated the session in between.
public final class SessionStore: Sendable {
    private let table: Mutex<LRUTable<String, Session>>
    private let clock: @Sendable () -> UInt64
    private let evictions = Atomic<Int>(0)
    private let expirations = Atomic<Int>(0)

    /// - Parameters:
    ///   - capacity: the most sessions kept.
    ///   - idleSeconds: how long a session may go unused.
    ///   - clock: nanoseconds of a monotonic clock (injectable for tests).
    public init(
        capacity: Int, idleSeconds: Double,
        clock: @escaping @Sendable () -> UInt64 = { SessionStore.monotonicNanoseconds() }
    ) {
        table = Mutex(LRUTable(capacity: capacity, idleTimeout: UInt64(idleSeconds * 1e9)))
        self.clock = clock
    }

    /// Sessions evicted because the store was full, since start.
    public var evictionCount: Int { evictions.load(ordering: .relaxed) }
    /// Sessions that expired idle, since start.
    public var expirationCount: Int { expirations.load(ordering: .relaxed) }
    /// Sessions kept now.
    public var count: Int { table.withLock { $0.count } }

    /// Adds a new session (evicting the least recently used past the capacity).
    public func insert(_ session: Session) {
        let removed = table.withLock { $0.insert(session.id, session, now: clock()) }
        count(removed)
    }

    /// The session `id`, marked used; `nil` when unknown, expired, evicted or deleted.
    public func session(_ id: String) -> Session? {
        table.withLock { $0.use(id, now: clock()) }
    }

    /// Whether the session `id` is still there (not expired, evicted or deleted); does not mark it used.
    public func contains(_ id: String) -> Bool {
        table.withLock { $0.contains(id, now: clock()) }
    }

    /// Stores `session` if the stored one still has `expectedRevision`.
    ///
    /// - Returns: `false` when the session is gone or was updated by another request meanwhile.
    public func update(_ session: Session, expectedRevision: UInt64) -> Bool {
        table.withLock { table in
            // The clock is read under the lock, so that uses are stamped in order (see LRUTable.isIdle).
            let now = clock()
            guard let stored = table.use(session.id, now: now), stored.revision == expectedRevision else {
                return false
            }
            return table.update(session.id, to: session, now: now)
        }
    }

    /// Removes a session; `false` when it was not there.
    @discardableResult
    public func remove(_ id: String) -> Bool {
        table.withLock { $0.remove(id) } != nil
    }

    /// Removes every session of `list` (the list was deleted).
    ///
    /// - Complexity: O(*n*) in the number of sessions.
    public func removeAll(of list: String) {
        _ = table.withLock { $0.removeAll { $0.list == list } }
    }

    /// Drops the sessions idle for too long.
    public func sweep() {
        let removed = table.withLock { $0.sweep(now: clock()) }
        count(removed)
    }

    private func count(_ removed: LRUTable<String, Session>.Removed) {
        if !removed.evicted.isEmpty { evictions.add(removed.evicted.count, ordering: .relaxed) }
        if !removed.expired.isEmpty { expirations.add(removed.expired.count, ordering: .relaxed) }
    }

    /// Nanoseconds since the first call, on the monotonic clock.
    public static func monotonicNanoseconds() -> UInt64 {
        let origin = Self.origin  // initialized (on first use) before `now` is read
        let elapsed = ContinuousClock.now - origin
        guard elapsed > .zero else { return 0 }
        return UInt64(elapsed.components.seconds) &* 1_000_000_000
            &+ UInt64(elapsed.components.attoseconds / 1_000_000_000)
    }

    private static let origin = ContinuousClock.now
}
