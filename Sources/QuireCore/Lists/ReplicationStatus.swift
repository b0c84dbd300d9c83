import Synchronization

/// What replication between instances sharing a store has done, for `/metrics` and `/readyz`: written by
/// the registry (conflicts, reloads) and by the store's change feed (notifications, catch-ups, lag),
/// read at each scrape. Counters only grow; a service on a store of its own leaves them at 0.
public final class ReplicationStatus: Sendable {
    private let conflicts = Atomic<Int>(0)
    private let listReloads = Atomic<Int>(0)
    private let notificationCount = Atomic<Int>(0)
    private let catchUpCount = Atomic<Int>(0)
    private let lagVersionCount = Atomic<Int>(0)
    private let lagSecondBits = Atomic<UInt64>(0)
    private let behind = Atomic<Bool>(false)

    public init() {}

    /// A write that lost the race to another instance's commit, replayed and made again.
    public func conflictRetried() { conflicts.add(1, ordering: .relaxed) }
    /// One list reloaded from the store (a change missed).
    public func listReloaded() { listReloads.add(1, ordering: .relaxed) }
    /// A notification of new commits received.
    public func notified() { notificationCount.add(1, ordering: .relaxed) }
    /// A sweep of every list held against the store's positions, after a (re)connection.
    public func caughtUp() { catchUpCount.add(1, ordering: .relaxed) }

    /// How far behind the log the instance is: in changes, and in seconds since the oldest change not
    /// yet applied was committed (0 when none is pending).
    public func setLag(versions: Int, seconds: Double) {
        lagVersionCount.store(versions, ordering: .relaxed)
        lagSecondBits.store(max(0, seconds).bitPattern, ordering: .relaxed)
    }

    /// Whether the instance is catching up (starting, or back from a lost connection to the store):
    /// `/readyz` answers `503` meanwhile.
    public var isCatchingUp: Bool {
        get { behind.load(ordering: .acquiring) }
        set { behind.store(newValue, ordering: .releasing) }
    }

    public struct Counts: Sendable, Equatable {
        public var conflicts = 0
        public var listReloads = 0
        public var notifications = 0
        public var catchUps = 0
        public var lagVersions = 0
        public var lagSeconds = 0.0

        public init(
            conflicts: Int = 0, listReloads: Int = 0, notifications: Int = 0, catchUps: Int = 0,
            lagVersions: Int = 0, lagSeconds: Double = 0
        ) {
            (self.conflicts, self.listReloads) = (conflicts, listReloads)
            (self.notifications, self.catchUps) = (notifications, catchUps)
            (self.lagVersions, self.lagSeconds) = (lagVersions, lagSeconds)
        }
    }

    public var counts: Counts {
        Counts(
            conflicts: conflicts.load(ordering: .relaxed), listReloads: listReloads.load(ordering: .relaxed),
            notifications: notificationCount.load(ordering: .relaxed),
            catchUps: catchUpCount.load(ordering: .relaxed), lagVersions: lagVersionCount.load(ordering: .relaxed),
            lagSeconds: Double(bitPattern: lagSecondBits.load(ordering: .relaxed)))
    }
}
