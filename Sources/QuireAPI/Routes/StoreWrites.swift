import Dispatch
import QuireCore
import QuireHTTP
import Synchronization

/// Where the routes that write to the store run: off libmicrohttpd's threads.
///
/// libmicrohttpd gives each connection to one of its few worker threads, for the connection's life. A write
/// that waits on the store (a PostgreSQL commit, up to `statementTimeout` and more when the database goes
/// away) held its worker thread that long, and every request of every other connection of that thread waited
/// behind it: reads stopped answering on half the connections during a database outage (seen by the cluster
/// test). Here the write's connection is suspended (a ``PendingResponse``, holding no thread) while the write
/// runs on a queue of its own (a lane, below), and resumed with its answer.
///
/// The writes run on lanes: serial queues, a list's writes always on the same one (they take the list's lock one
/// after another anyway), different lists spread over ``laneCount`` of them. Not one concurrent queue: on Linux,
/// libdispatch runs a concurrent queue's work on its pool of about one thread per core, which it grows by about a
/// thread a second while they block, and a commit waiting on the database blocks its thread (an unreachable
/// database, or another instance holding the list's lock). Past two or three such commits, every other write
/// (and the pool's other work, as the long polls' fan-out) queued behind them: with six held, a write of another
/// list was answered after 6 s (`StoreWriteTests`, on that design), 0.3 s on lanes. A serial queue is given a
/// thread of its own whenever it has work, whatever the pool's threads are doing, so a stuck commit holds only
/// the writes of its own lane.
///
/// A store in memory or on this machine's disk (a SQLite file) has one writer instead (``together(_:in:answer:)``):
/// its writes share transactions and syncs, which lanes made them do only by waking each other (about three thread
/// switches a write where the writer costs a fraction of one).
///
/// A write always answers with its own outcome: on shutdown, a write still running is waited for (its
/// commit is neither lost nor answered as refused), and ``waitUntilIdle()`` lets the service wait for every
/// write before its store is closed. A write that arrives once the service is shutting down is not made: it
/// is refused at once (`503 overloaded`, `Retry-After`), rather than started and waited for on the thread
/// that received it while that thread's other connections drain.
///
/// The listing (`GET /v1/lists`), which reads the store, runs here too for the same reason (``deferredRead(_:)``),
/// on lanes of its own: a listing waiting on the store holds up no write, and no stuck write holds up a listing.
final class StoreWrites: Sendable {
    /// How many lists' writes can run at once, at most (fewer when two lists share a lane).
    static let laneCount = 16
    private let lanes = (0..<StoreWrites.laneCount).map { DispatchQueue(label: "quire.store-writes.\($0)") }
    /// How many listings can read the store at once, at most.
    static let readLaneCount = 4
    private let readLanes = (0..<StoreWrites.readLaneCount).map { DispatchQueue(label: "quire.store-reads.\($0)") }
    /// The read lane of the next listing (round robin).
    private let nextReadLane = Atomic<Int>(0)
    /// The writes queued or running.
    private let running = DispatchGroup()
    /// The writes queued or running on lanes or by the writer of batches.
    private let offThread = Atomic<Int>(0)
    /// Whether a write is being made by ``alone(_:)`` now.
    private let aloneUnderWay = Atomic<Bool>(false)
    /// Until when (`DispatchTime` uptime, ns) ``alone(_:)`` passes writes on: a slow sync was seen.
    private let aloneBarredUntil = Atomic<UInt64>(0)
    /// A write made alone that took longer than this (ns) bars the next ones from the receiving thread for
    /// `aloneBar`: the disk is slow (a stall, another process's I/O), and its waits belong off libmicrohttpd's threads.
    private let aloneLimit: UInt64
    private let aloneBar: UInt64

    /// - Parameters:
    ///   - aloneLimit: how long a write made by ``alone(_:)`` may take before the next ones go to the writer.
    ///   - aloneBar: for how long they go to the writer then.
    init(aloneLimit: Duration = .milliseconds(5), aloneBar: Duration = .seconds(10)) {
        self.aloneLimit = Self.nanoseconds(aloneLimit)
        self.aloneBar = Self.nanoseconds(aloneBar)
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
    }
    private let isShuttingDown = Atomic<Bool>(false)

    /// New writes are refused from now on (the service is shutting down).
    func stopTakingWrites() {
        isShuttingDown.store(true, ordering: .releasing)
    }

    /// What a write gets once the service is shutting down (`nil` before): it is not made.
    private var writeRefusal: Reply? {
        guard isShuttingDown.load(ordering: .acquiring) else { return nil }
        return .response(
            Problem.overloaded(
                "The service is shutting down: nothing was written. Retry (another instance, or this one once it is back).",
                retryAfterSeconds: 1, written: .no
            ).response)
    }

    /// The lane of `list`'s writes: the same for the same name in every run (FNV-1a of its bytes).
    static func lane(of list: String) -> Int {
        var hash: UInt32 = 2_166_136_261
        for byte in list.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return Int(hash % UInt32(laneCount))
    }

    /// The reply of `write` of `list`, made on the list's lane; the connection waits suspended until it is ready.
    func deferred(list: String, _ write: @escaping @Sendable () -> Response) -> Reply {
        if let refusal = writeRefusal { return refusal }
        let outcome = Outcome()
        let pending = PendingResponse(onShutdown: { outcome.wait() })
        offThread.add(1, ordering: .relaxed)
        lanes[Self.lane(of: list)].async(group: running) {
            let response = write()
            self.offThread.subtract(1, ordering: .relaxed)
            outcome.set(response)
            pending.resume(with: response)
        }
        return .deferred(pending)
    }

    /// The writes waiting for the writer of batches, and whether it is at work (it takes them all when it is next
    /// free).
    private let batch = Mutex(Batch())
    private let batchWriter = DispatchQueue(label: "quire.store-writes.together")
    /// The most writes one batch commits: each of its lists' locks is held until its commit.
    static let batchLimit = 256

    private struct Batch {
        var queued: [Queued] = []
        var writing = false
    }

    /// A write waiting for the writer of batches, and where its answer goes.
    private struct Queued: Sendable {
        let write: ListRegistry.QueuedWrite
        let answer: @Sendable (Result<ListRegistry.Commit, ListRegistry.WriteError>) -> Response
        let outcome: Outcome
        let pending: PendingResponse
    }

    /// The reply of `write`, made by one writer with every write queued beside it, in one transaction of the store
    /// (``ListRegistry/write(together:)``: one sync of the disk for all, group commit); the connection waits
    /// suspended until `answer` made its response from the outcome. The writer takes every write queued while it
    /// committed the last batch: nothing waits for company (a write that finds it free is taken at once), and
    /// under load each sync serves every write that arrived during the one before. For a store in memory or on this
    /// machine's disk (a database would serialize its round trips behind one thread: its writes go to lanes).
    func together(
        _ write: ListRegistry.QueuedWrite, in registry: ListRegistry,
        answer: @escaping @Sendable (Result<ListRegistry.Commit, ListRegistry.WriteError>) -> Response
    ) -> Reply {
        if let refusal = writeRefusal { return refusal }
        let outcome = Outcome()
        let pending = PendingResponse(onShutdown: { outcome.wait() })
        offThread.add(1, ordering: .relaxed)
        let starts = batch.withLock { batch in
            batch.queued.append(Queued(write: write, answer: answer, outcome: outcome, pending: pending))
            if batch.writing { return false }
            batch.writing = true
            return true
        }
        if starts { batchWriter.async(group: running) { self.writeBatches(in: registry) } }
        return .deferred(pending)
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
                let response = queued.answer(outcome)
                offThread.subtract(1, ordering: .relaxed)
                queued.outcome.set(response)
                queued.pending.resume(with: response)
            }
            // The versions these writes replaced are freed by another thread (their queued writes hold the last
            // references): measured, freeing them took a tenth of this one thread's time.
            DispatchQueue.global().async { withExtendedLifetime((taken, outcomes)) {} }
        }
    }

    /// The reply of `write`, made at once on the calling thread (libmicrohttpd's) when no other write is queued or
    /// running and no write made so was slow in the last `aloneBar`; `nil` otherwise (the caller hands it to the
    /// writer of batches, ``together(_:in:answer:)``). For a store that waits only on this machine's disk (``ListStore/syncsLocally``): a lone producer's
    /// write then waits on its sync and nothing else, where a lane costs two thread wake-ups (measured: a third of
    /// a lone write's time, docs/performance.md). At most one write at a time is made so, so at most one of
    /// libmicrohttpd's threads waits on the disk, for one commit (the lanes exist so that a store that stops
    /// answering holds up no connection but its writes'); once a busy producer overlaps its writes, they all go to
    /// the writer and share syncs (group commit).
    ///
    /// `syncs`: whether the write waits on the disk. A store in memory (``ListStore/answersAtOnce``) has no disk to
    /// stall: its slow writes (a large list replaced) bar nothing.
    func alone(syncs: Bool = true, _ write: () throws(Problem) -> Reply) throws(Problem) -> Reply? {
        guard offThread.load(ordering: .relaxed) == 0,
            !syncs || DispatchTime.now().uptimeNanoseconds >= aloneBarredUntil.load(ordering: .relaxed),
            aloneUnderWay.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        else { return nil }
        defer { aloneUnderWay.store(false, ordering: .releasing) }
        guard syncs else { return try immediate(write) }
        let started = DispatchTime.now().uptimeNanoseconds
        defer {
            let ended = DispatchTime.now().uptimeNanoseconds
            if ended - started > aloneLimit {
                aloneBarredUntil.store(ended + aloneBar, ordering: .relaxed)
            }
        }
        return try immediate(write)
    }

    /// The reply of `write`, made at once on the calling thread (libmicrohttpd's): for a store that answers every
    /// call at once (``ListStore/answersAtOnce``, the in-memory store), where a write waits on nothing but its
    /// list's lock, held for microseconds by another write. Handing such a write to a lane and the answer back
    /// cost thread wake-ups (5 context switches a write, 0.6 here) and a suspended connection resumed, more than the
    /// write itself. Refused as on a lane once the service is shutting down, and waited for by ``waitUntilIdle()``
    /// as well.
    func immediate(_ write: () throws(Problem) -> Reply) throws(Problem) -> Reply {
        running.enter()
        defer { running.leave() }
        if let refusal = writeRefusal { return refusal }
        return try write()
    }

    /// The reply of `read`, a route's read of the store, made on a read lane; the connection waits suspended until
    /// it is ready. Refused at once, like a write, once the service is shutting down (its store is about to close).
    func deferredRead(_ read: @escaping @Sendable () -> Response) -> Reply {
        if isShuttingDown.load(ordering: .acquiring) {
            return .response(
                Problem.overloaded(
                    "The service is shutting down. Retry (another instance, or this one once it is back).",
                    retryAfterSeconds: 1
                ).response)
        }
        let outcome = Outcome()
        let pending = PendingResponse(onShutdown: { outcome.wait() })
        let lane = nextReadLane.add(1, ordering: .relaxed).oldValue % Self.readLaneCount
        readLanes[lane].async(group: running) {
            let response = read()
            outcome.set(response)
            pending.resume(with: response)
        }
        return .deferred(pending)
    }

    /// Returns when no write (or read) is queued or running (at once when none is).
    func waitUntilIdle() {
        running.wait()
    }

    /// A write's response, given once, waited for by a shutdown that comes first.
    private final class Outcome: Sendable {
        private let response = Mutex<Response?>(nil)
        private let given = DispatchSemaphore(value: 0)

        func set(_ response: Response) {
            self.response.withLock { $0 = response }
            given.signal()
        }

        func wait() -> Response {
            given.wait()
            given.signal()  // for any later waiter
            return response.withLock { $0! }
        }
    }
}
