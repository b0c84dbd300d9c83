import Dispatch
import QuireCore
import QuireHTTP
import Synchronization

/// A write as ``WriteScheduler`` runs it: each producer says how its write is made on the calling thread, handed to
/// the writer of batches or to its list's lane, and what its outcome becomes there (an HTTP reply, a producer's
/// completion). A value made for each write, on the stack: placing it costs no allocation.
protocol PlacedWrite {
    /// What the producer gets back where it entered: a reply for a connection, nothing for a completion.
    associatedtype Answer
    associatedtype Failure: Error
    /// Made on the calling thread, now.
    func madeHere() throws(Failure) -> Answer
    /// Handed to the writer of batches (``WriteScheduler/together(_:in:answer:)``).
    func handedToBatchWriter(of scheduler: WriteScheduler) -> Answer
    /// Handed to its list's lane (``WriteScheduler/deferred(list:_:)``).
    func handedToLane(of scheduler: WriteScheduler) -> Answer
    /// Not made: the service is shutting down.
    func refused() -> Answer
}

/// Where writes run: here on the receiving thread, by the writer of batches, or on their list's lane, as their
/// ``WritePlacement`` says; off libmicrohttpd's threads whenever a write could hold one up.
///
/// libmicrohttpd gives each connection to one of its few worker threads, for the connection's life. A write that
/// waits on the store (a PostgreSQL commit, up to `statementTimeout` and more when the database goes away) would
/// hold its worker thread that long, and every request of every other connection of that thread would wait behind
/// it: reads would stop answering on half the connections during a database outage. Off that thread, the write's
/// connection is suspended (a ``PendingResponse``, holding no thread) while the write runs elsewhere, and resumed
/// with its answer. Its three places, each in a file of its own:
///
/// - the receiving thread (`WriteScheduler+ReceivingThread.swift`): ``alone(refused:_:)``, a lone write of a
///   store on this machine's disk, and ``immediate(refused:_:)``, every write of a store in memory;
/// - the lanes (`WriteLanes.swift`): ``deferred(list:_:)``, a write of a database on its list's serial queue;
/// - the writer of batches (`BatchWriter.swift`): ``together(_:in:answer:)``, the writes of a store on this
///   machine's disk that overlap, committed in shared transactions.
///
/// A write always answers with its own outcome: on shutdown, a write still running is waited for (its commit is
/// neither lost nor answered as refused), and ``waitUntilIdle()`` lets the service wait for every write before its
/// store is closed. A write that arrives once the service is shutting down is not made: it is refused at once
/// (`503 overloaded`, `Retry-After`), rather than started and waited for on the thread that received it while that
/// thread's other connections drain.
final class WriteScheduler: Sendable {
    // MARK: - What is under way

    /// The writes queued or running, wherever they run.
    let running = DispatchGroup()
    /// The writes queued or running on lanes or by the writer of batches: while there is one, no write is made on
    /// the receiving thread.
    let offThread = Atomic<Int>(0)
    private let isShuttingDown = Atomic<Bool>(false)

    // MARK: - The receiving thread (WriteScheduler+ReceivingThread.swift)

    /// Whether a write is being made by ``alone(refused:_:)`` now.
    let aloneUnderWay = Atomic<Bool>(false)
    /// Until when (`DispatchTime` uptime, ns) ``alone(refused:_:)`` passes writes on: a slow sync was seen.
    let aloneBarredUntil = Atomic<UInt64>(0)
    /// A write made alone that took longer than this (ns) bars the next ones from the receiving thread for
    /// ``aloneBarFactor`` times as long as it took, at most `aloneBar`: the disk is slow (a stall, another process's
    /// I/O), and its waits belong off libmicrohttpd's threads. In proportion, so that a lone hiccup (a checkpoint, the
    /// first syncs of a new file) sends a lone producer's writes to the writer for a moment, where a stall keeps them
    /// there for long; either way the receiving threads spend at most about a hundredth of their time in slow syncs.
    let aloneLimit: UInt64
    let aloneBar: UInt64
    static let aloneBarFactor: UInt64 = 100

    // MARK: - The lanes (WriteLanes.swift) and the writer of batches (BatchWriter.swift)

    let lanes = (0..<WriteScheduler.laneCount).map { DispatchQueue(label: "quire.store-writes.\($0)") }
    /// The writes waiting for the writer of batches, and whether it is at work (it takes them all when it is next
    /// free).
    let batch = Mutex(Batch())
    let batchWriter = DispatchQueue(label: "quire.store-writes.together")

    /// - Parameters:
    ///   - aloneLimit: how long a write made by ``alone(refused:_:)`` may take before the next ones go to the
    ///     writer.
    ///   - aloneBar: for how long at most they go to the writer then.
    init(aloneLimit: Duration = .milliseconds(5), aloneBar: Duration = .seconds(10)) {
        self.aloneLimit = Self.nanoseconds(aloneLimit)
        self.aloneBar = Self.nanoseconds(aloneBar)
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
    }

    // MARK: - Placing a write

    /// Runs `write` where `placement` says: on the calling thread when it may be made there (and, for
    /// ``WritePlacement/hereWhenAlone(otherwise:)``, when the thread is free for it), else handed to the writer
    /// of batches or to its list's lane.
    func run<Write: PlacedWrite>(_ write: Write, at placement: WritePlacement) throws(Write.Failure) -> Write.Answer {
        if case .hereWhenAlone = placement,
            let answer = try alone(refused: { write.refused() }, { () throws(Write.Failure) in try write.madeHere() })
        {
            return answer
        }
        switch placement.place(aloneGranted: false) {
        case .here:
            return try immediate(refused: { write.refused() }, { () throws(Write.Failure) in try write.madeHere() })
        case .batchWriter: return write.handedToBatchWriter(of: self)
        case .lane: return write.handedToLane(of: self)
        }
    }

    // MARK: - Shutdown

    /// New writes are refused from now on (the service is shutting down).
    func stopTakingWrites() {
        isShuttingDown.store(true, ordering: .releasing)
    }

    /// Whether new writes are refused (``stopTakingWrites()``).
    var isRefusing: Bool { isShuttingDown.load(ordering: .acquiring) }

    /// What a connection's write gets once the service is shutting down: it is not made.
    static var refusal: Reply {
        .response(
            Problem.overloaded(
                "The service is shutting down: nothing was written. Retry (another instance, or this one once it is back).",
                retryAfterSeconds: 1, written: .no
            ).response)
    }

    /// What a connection's write gets once the service is shutting down (`nil` before): it is not made.
    var writeRefusal: Reply? { isRefusing ? Self.refusal : nil }

    /// Returns when no write is queued or running (at once when none is).
    func waitUntilIdle() {
        running.wait()
    }
}
