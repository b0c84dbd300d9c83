import Dispatch
import GRDB
import Synchronization

/// Commits of several writers in one transaction and one sync of the file: group commit, which SQLite does not do
/// itself (one writer at a time, one `fsync` per transaction).
///
/// The service's writer of batches gathers its own (``together(_:)``). The writes made one at a time (a lone write
/// on the thread that received it, the live demo's producer, a tool, writers of several threads in the tests)
/// meet here: each writer queues its write. A writer that finds no commit under way leads: it takes everything queued, writes it in one
/// `BEGIN IMMEDIATE` transaction, commits (one sync), and tells every writer of the batch its outcome; if more
/// writes queued meanwhile, it hands the lead to the first of them and returns. So a lone writer commits at once
/// (nothing waits for company), and writers that arrive while a sync is under way share the next one. A write is
/// acknowledged only once its batch is durable; a batch that fails to commit fails every write in it, and
/// changes nothing (the transaction rolls back).
final class GroupCommit: Sendable {
    /// One queued write and its outcome.
    private final class Pending: Sendable {
        let work: @Sendable (Database) throws -> Void
        private let outcome = Mutex<Outcome?>(nil)
        private let told = DispatchSemaphore(value: 0)

        enum Outcome {
            case committed
            case failed(any Error)
            /// The writer leads the next batch.
            case lead
        }

        init(_ work: @escaping @Sendable (Database) throws -> Void) {
            self.work = work
        }

        func tell(_ outcome: Outcome) {
            self.outcome.withLock { $0 = outcome }
            told.signal()
        }

        func wait() -> Outcome {
            told.wait()
            return outcome.withLock { $0! }
        }
    }

    private struct State {
        var queue: [Pending] = []
        var leading = false
    }

    private let state = Mutex(State())
    private let database: DatabaseQueue
    private let commits = Atomic<Int>(0)
    private let writes = Atomic<Int>(0)

    /// Told, while the connection is still the batch's, whether its transaction committed.
    private let settled: @Sendable (Bool) -> Void

    init(_ database: DatabaseQueue, settled: @escaping @Sendable (Bool) -> Void) {
        self.database = database
        self.settled = settled
    }

    /// Transactions committed, and the writes they held (their ratio is the batches' mean size).
    var counts: (commits: Int, writes: Int) { (commits.load(ordering: .relaxed), writes.load(ordering: .relaxed)) }

    /// Runs `work` in a transaction shared with the writes queued beside it; returns once that transaction is
    /// durable.
    ///
    /// - Throws: the error of the batch's transaction (this write and every other of the batch are not stored).
    func write(_ work: @escaping @Sendable (Database) throws -> Void) throws {
        let pending = Pending(work)
        let leads = state.withLock { state in
            state.queue.append(pending)
            if state.leading { return false }
            state.leading = true
            return true
        }
        if !leads {
            switch pending.wait() {
            case .committed: return
            case .failed(let error): throw error
            case .lead: break
            }
        }
        try lead(pending)
    }

    /// Runs `works` in one transaction of their own, now (a batch a single writer gathered itself); returns once it
    /// is durable.
    ///
    /// - Throws: the error of the transaction (none of `works` is stored).
    func together(_ works: [@Sendable (Database) throws -> Void]) throws {
        try database.writeWithoutTransaction { db in
            do {
                try RawStatement.transaction(db) {
                    for work in works { try work(db) }
                }
            } catch {
                settled(false)
                throw error
            }
            settled(true)
        }
        commits.add(1, ordering: .relaxed)
        writes.add(works.count, ordering: .relaxed)
    }

    /// Commits everything queued (`own` among it) in one transaction, tells each writer, and hands the lead on.
    private func lead(_ own: Pending) throws {
        let batch = state.withLock { state in
            defer { state.queue = [] }
            return state.queue
        }
        var failure: (any Error)?
        do {
            try together(batch.map(\.work))
        } catch {
            failure = error
        }
        for pending in batch where pending !== own {
            pending.tell(failure.map { .failed($0) } ?? .committed)
        }
        let next = state.withLock { state -> Pending? in
            guard let first = state.queue.first else {
                state.leading = false
                return nil
            }
            return first
        }
        next?.tell(.lead)
        if let failure { throw failure }
    }
}
