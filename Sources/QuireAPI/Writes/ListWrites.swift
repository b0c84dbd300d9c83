import Dispatch
import Logging
import QuireCore
import QuireHTTP
import QuireSources
import Synchronization

/// The one way into the write path: every producer of list writes enters here, the routes (`PUT`, `POST …/ops`,
/// `DELETE`) with a request read, and any producer of its own thread (a follower of a database's rows) with a write
/// it made. Each write goes through the same placement (``WritePlacement``, decided once for the registry's store)
/// and the same ``WriteScheduler``: here on the receiving thread, by the writer of batches, or on its list's lane.
///
/// The way of a write, in this folder, top to bottom: this entry point; ``WritePlacement``, where it runs;
/// ``WriteScheduler`` and its parts, which run it there (the receiving thread, the lanes, the writer of batches);
/// ``ListRegistry`` commits it; `WriteAnswers.swift` turns its outcome into a response.
final class ListWrites: Sendable {
    let registry: ListRegistry
    let scheduler: WriteScheduler
    let logger: Logger
    /// Where a write of the registry's store runs (the store's kind does not change).
    let writePlacement: WritePlacement
    /// Where a delete of the registry's store runs.
    let deletePlacement: WritePlacement
    /// The configured sources, whose lists no other producer writes.
    let sources: [SourceConfiguration]
    /// Their followers, made when the service starts.
    let followers = Mutex<[SourceFollower]>([])

    init(
        registry: ListRegistry, logger: Logger, sources: [SourceConfiguration] = [],
        scheduler: WriteScheduler = WriteScheduler()
    ) {
        self.registry = registry
        self.sources = sources
        self.logger = logger
        self.scheduler = scheduler
        let kind = StoreKind(of: registry)
        writePlacement = .write(in: kind)
        deletePlacement = .delete(in: kind)
    }

    // MARK: - A connection's writes

    /// The reply of a connection's `write` (read from its request on this thread, libmicrohttpd's), made where its
    /// store lets it be made soonest.
    func reply(to write: ListRegistry.QueuedWrite) -> Reply {
        if let refusal = sourceRefusal(of: write.name) { return refusal }
        return scheduler.run(ConnectionWrite(writes: self, write: write), at: writePlacement)
    }

    /// The reply of a connection's delete of `name`: `204`, or the problem that refused it.
    func replyToDelete(of name: String, ifMatch: ListRegistry.IfMatch?) -> Reply {
        if let refusal = sourceRefusal(of: name) { return refusal }
        return scheduler.run(ConnectionDelete(writes: self, name: name, ifMatch: ifMatch), at: deletePlacement)
    }

    // MARK: - A producer's writes

    /// Makes `write` for a producer that is not a connection, where a connection's would be made, and tells
    /// `completion` its outcome: on the calling thread before this returns, when it is made here; else on the
    /// writer's or the lane's thread. Once the service is shutting down nothing is made, and the outcome is
    /// `.storage` (as a refused connection's write, nothing was written).
    func submit(
        _ write: ListRegistry.QueuedWrite,
        completion: @escaping @Sendable (Result<ListRegistry.Commit, ListRegistry.WriteError>) -> Void
    ) {
        scheduler.run(ProducerWrite(writes: self, write: write, completion: completion), at: writePlacement)
    }

    /// The outcome of `write`, made as ``submit(_:completion:)`` makes it, waited for on the calling thread.
    ///
    /// - Precondition: not called on libmicrohttpd's threads (it would hold up their connections), nor on a lane or
    ///   the writer of batches (it would wait for itself).
    func commit(_ write: ListRegistry.QueuedWrite) -> Result<ListRegistry.Commit, ListRegistry.WriteError> {
        let outcome = Mutex<Result<ListRegistry.Commit, ListRegistry.WriteError>?>(nil)
        let given = DispatchSemaphore(value: 0)
        submit(write) { result in
            outcome.withLock { $0 = result }
            given.signal()
        }
        given.wait()
        return outcome.withLock { $0! }
    }

    // MARK: - Shutdown

    /// New writes are refused from now on (the service is shutting down).
    func stopTakingWrites() {
        scheduler.stopTakingWrites()
    }

    /// Returns when no write is queued or running (at once when none is).
    func waitUntilIdle() {
        scheduler.waitUntilIdle()
    }
}

// MARK: - The writes as the scheduler places them

/// A connection's write of a list (`PUT`, `POST …/ops`), answered with a reply.
private struct ConnectionWrite: PlacedWrite {
    typealias Failure = Never
    let writes: ListWrites
    let write: ListRegistry.QueuedWrite

    func madeHere() -> Reply { .response(writes.writeNow(write)) }

    func handedToBatchWriter(of scheduler: WriteScheduler) -> Reply {
        // Made beforehand on this thread, in parallel with the others: the writer then only commits it.
        var prepared = write
        writes.registry.prepare(&prepared)
        return scheduler.together(prepared, in: writes.registry) { [writes, name = write.name] in
            writes.writeResponse($0, list: name)
        }
    }

    func handedToLane(of scheduler: WriteScheduler) -> Reply {
        scheduler.deferred(list: write.name) { [writes, write] in writes.writeNow(write) }
    }

    func refused() -> Reply { WriteScheduler.refusal }
}

/// A connection's delete of a list, answered with a reply.
private struct ConnectionDelete: PlacedWrite {
    typealias Failure = Never
    let writes: ListWrites
    let name: String
    let ifMatch: ListRegistry.IfMatch?

    func madeHere() -> Reply { .response(writes.deleteNow(name, ifMatch: ifMatch)) }

    /// A delete is not batched (``ListRegistry/write(together:)`` makes writes only), and no placement hands one to
    /// the writer: were one to, the list's lane makes it.
    func handedToBatchWriter(of scheduler: WriteScheduler) -> Reply { handedToLane(of: scheduler) }

    func handedToLane(of scheduler: WriteScheduler) -> Reply {
        scheduler.deferred(list: name) { [writes, name, ifMatch] in writes.deleteNow(name, ifMatch: ifMatch) }
    }

    func refused() -> Reply { WriteScheduler.refusal }
}

/// A producer's write, whose outcome goes to its completion.
private struct ProducerWrite: PlacedWrite {
    typealias Failure = Never
    let writes: ListWrites
    let write: ListRegistry.QueuedWrite
    let completion: @Sendable (Result<ListRegistry.Commit, ListRegistry.WriteError>) -> Void

    func madeHere() { completion(writes.commitNow(write)) }

    func handedToBatchWriter(of scheduler: WriteScheduler) {
        var prepared = write
        writes.registry.prepare(&prepared)
        if !scheduler.together(producerWrite: prepared, in: writes.registry, completion: completion) { refused() }
    }

    func handedToLane(of scheduler: WriteScheduler) {
        let made = scheduler.onLane(list: write.name) { [writes, write, completion] in
            completion(writes.commitNow(write))
        }
        if !made { refused() }
    }

    func refused() {
        completion(.failure(.storage("The service is shutting down: nothing was written.")))
    }
}
