import Synchronization

/// A source's figures as its follower keeps them, for `/metrics` (API.md §2b) and `quire sources status`.
public final class SourceStatistics: Sendable {
    /// Whether the follower is copying the table or following its log now.
    let up = Atomic<Bool>(false)
    /// Whether another instance holds the source's lock, this one waiting to take over.
    let standby = Atomic<Bool>(false)
    /// Whether the table is being copied (its lists answer `503 source-syncing`).
    let syncing = Atomic<Bool>(false)
    /// The database's end of log, as last heard.
    let serverPosition = Atomic<UInt64>(0)
    /// The end of the last transaction applied.
    let appliedPosition = Atomic<UInt64>(0)
    /// The log the slot keeps, as last measured.
    let retainedBytes = Atomic<UInt64>(0)
    let transactions = Atomic<Int>(0)
    /// Commits of the store the transactions took (several transactions are committed together).
    let commits = Atomic<Int>(0)
    let inserts = Atomic<Int>(0)
    let updates = Atomic<Int>(0)
    let deletes = Atomic<Int>(0)
    let skipped = Atomic<Int>(0)
    /// Commit-to-apply durations, in buckets of ``bounds`` seconds (the last one for longer), with their sum: once a
    /// transaction, under a lock only `/metrics` also takes.
    let histogram = Mutex<(buckets: [Int], sum: Double)>(([Int](repeating: 0, count: bounds.count + 1), 0))
    /// Why the source stopped, when it did.
    let stopReason = Mutex<String?>(nil)

    /// The histogram's upper bounds, in seconds.
    public static let bounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    public init() {}

    public var isUp: Bool { up.load(ordering: .relaxed) }
    public var isSyncing: Bool { syncing.load(ordering: .relaxed) }
    public var isStandby: Bool { standby.load(ordering: .relaxed) }
    public var transactionCount: Int { transactions.load(ordering: .relaxed) }
    public var commitCount: Int { commits.load(ordering: .relaxed) }
    public var skippedCount: Int { skipped.load(ordering: .relaxed) }
    public var applied: LSN { LSN(appliedPosition.load(ordering: .relaxed)) }
    public var retainedWALBytes: UInt64 { retainedBytes.load(ordering: .relaxed) }
    public var reasonStopped: String? { stopReason.withLock { $0 } }

    /// The database's end of log minus what is applied, in bytes.
    public var lagBytes: UInt64 {
        let server = serverPosition.load(ordering: .relaxed)
        let applied = appliedPosition.load(ordering: .relaxed)
        return server > applied ? server - applied : 0
    }

    /// Row changes applied, by `op` (`insert`, `update`, `delete`).
    public var rows: [(op: String, count: Int)] {
        [
            ("insert", inserts.load(ordering: .relaxed)), ("update", updates.load(ordering: .relaxed)),
            ("delete", deletes.load(ordering: .relaxed)),
        ]
    }

    /// The commit-to-apply histogram: cumulative counts per bound (then `+Inf`), and the sum in seconds.
    public var commitToApply: (cumulative: [Int], sum: Double) {
        let (buckets, sum) = histogram.withLock { $0 }
        var running = 0
        let cumulative = buckets.map { bucket in
            running += bucket
            return running
        }
        return (cumulative, sum)
    }

    func record(commitToApply seconds: Double) {
        let index = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
        histogram.withLock { histogram in
            histogram.buckets[index] += 1
            histogram.sum += max(0, seconds)
        }
    }

    func count(_ rows: [String: Int]) {
        inserts.add(rows["insert"] ?? 0, ordering: .relaxed)
        updates.add(rows["update"] ?? 0, ordering: .relaxed)
        deletes.add(rows["delete"] ?? 0, ordering: .relaxed)
    }
}
