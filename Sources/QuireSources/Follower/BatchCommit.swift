import Dispatch
import QuireCore

/// A batch's commit made on a thread of its own while the stream reads and builds the next batch: the stream's
/// thread then only reads the log and builds transactions, and the commit (the registry's writes, the store's
/// transaction and sync, and freeing the versions the batch replaced) runs beside it.
///
/// The stream waits for one commit before it starts the next (``outcome()``), so batches are committed in order and
/// at most one is in flight; a batch built meanwhile builds on the versions of the one in flight
/// (``SourceBatch/version(of:)``), which the registry holds only once it is committed.
final class BatchCommit: Sendable {
    /// What the commit came to.
    struct Outcome: Sendable {
        /// The first write that failed, if any: the batch is not stored then.
        let failure: ListRegistry.WriteError?
        /// When it was durable, for `quire_source_commit_to_apply_seconds`.
        let committedAt: PostgresTimestamp
    }

    private let result = GivenOnce<Outcome>()

    /// Starts committing `writes` with `progress` on `queue`.
    init(
        _ writes: [ListRegistry.QueuedWrite], progress: SourceProgress, writer: any SourceWriter,
        on queue: DispatchQueue
    ) {
        queue.async { [result] in
            var failure: ListRegistry.WriteError?
            for outcome in writer.commit(writes, progress: progress) {
                if case .failure(let error) = outcome {
                    failure = error
                    break
                }
            }
            result.set(Outcome(failure: failure, committedAt: .now()))
        }
    }

    /// Waits until the commit is over: what it came to.
    func outcome() -> Outcome {
        result.wait()
    }
}
