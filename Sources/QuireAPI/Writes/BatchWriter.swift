import Dispatch
import QuireCore
import QuireHTTP
import Synchronization

/// The writer of batches: one writer for a store on this machine's disk, which makes every write
/// queued beside another in one transaction of the store (``ListRegistry/write(together:)``: one sync of the disk
/// for all, group commit). On lanes, such writes would share transactions and syncs only by waking each other,
/// several thread switches a write where the writer costs a fraction of one. A database's writes go to lanes
/// instead: one writer would serialize their round trips.
///
/// The writer takes every write queued while it committed the last batch: nothing waits for company (a write that
/// finds it free is taken at once), and under load each sync serves every write that arrived during the one before.
extension WriteScheduler {
    /// The most writes one batch commits: each of its lists' locks is held until its commit.
    static let batchLimit = 256

    struct Batch {
        var queued: [Queued] = []
        var writing = false
    }

    /// A write waiting for the writer of batches, and where its outcome goes.
    struct Queued: Sendable {
        let write: ListRegistry.QueuedWrite
        let recipient: Recipient
    }

    /// Who waits for a batched write's outcome.
    enum Recipient: Sendable {
        /// A suspended connection: `answer` makes its response, given to `outcome` (for a shutdown that waits) and
        /// to `pending`.
        case connection(
            answer: @Sendable (Result<ListRegistry.Commit, ListRegistry.WriteError>) -> Response,
            outcome: ResponseOnce, pending: PendingResponse)
        /// A producer that is not a connection, told on the writer's thread.
        case producer(@Sendable (Result<ListRegistry.Commit, ListRegistry.WriteError>) -> Void)
    }

    /// The reply of `write`, made by the writer of batches with every write queued beside it; the connection waits
    /// suspended until `answer` made its response from the outcome.
    func together(
        _ write: ListRegistry.QueuedWrite, in registry: ListRegistry,
        answer: @escaping @Sendable (Result<ListRegistry.Commit, ListRegistry.WriteError>) -> Response
    ) -> Reply {
        if let refusal = writeRefusal { return refusal }
        let outcome = ResponseOnce()
        let pending = PendingResponse(onShutdown: { outcome.wait() })
        enqueue(
            Queued(write: write, recipient: .connection(answer: answer, outcome: outcome, pending: pending)), registry)
        return .deferred(pending)
    }

    /// Makes `write` by the writer of batches, for a producer that is not a connection: `completion` is told its
    /// outcome on the writer's thread. `false` when the service is shutting down (nothing is made).
    func together(
        producerWrite write: ListRegistry.QueuedWrite, in registry: ListRegistry,
        completion: @escaping @Sendable (Result<ListRegistry.Commit, ListRegistry.WriteError>) -> Void
    ) -> Bool {
        if isRefusing { return false }
        enqueue(Queued(write: write, recipient: .producer(completion)), registry)
        return true
    }

    /// Queues `queued` for the writer, and sets the writer to work when it is not.
    private func enqueue(_ queued: Queued, _ registry: ListRegistry) {
        offThread.add(1, ordering: .relaxed)
        let starts = batch.withLock { batch in
            batch.queued.append(queued)
            if batch.writing { return false }
            batch.writing = true
            return true
        }
        if starts { batchWriter.async(group: running) { self.writeBatches(in: registry) } }
    }

    /// The writer of batches: commits what is queued, answers each write, and goes on until nothing is queued.
    private func writeBatches(in registry: ListRegistry) {
        while true {
            let taken = batch.withLock { batch -> [Queued] in
                guard batch.queued.count > Self.batchLimit else {
                    if batch.queued.isEmpty { batch.writing = false }
                    defer { batch.queued = [] }
                    return batch.queued
                }
                defer { batch.queued.removeFirst(Self.batchLimit) }
                return Array(batch.queued.prefix(Self.batchLimit))
            }
            guard !taken.isEmpty else { return }
            let outcomes = registry.write(together: taken.map(\.write))
            for (queued, outcome) in zip(taken, outcomes) {
                switch queued.recipient {
                case .connection(let answer, let given, let pending):
                    let response = answer(outcome)
                    offThread.subtract(1, ordering: .relaxed)
                    given.set(response)
                    pending.resume(with: response)
                case .producer(let completion):
                    offThread.subtract(1, ordering: .relaxed)
                    completion(outcome)
                }
            }
            // The versions these writes replaced are freed by another thread (their queued writes hold the last
            // references): freeing them is a large share of this one thread's work, which commits for every writer.
            DispatchQueue.global().async { withExtendedLifetime((taken, outcomes)) {} }
        }
    }
}
