import Dispatch
import QuireCore
import QuireHTTP
import Synchronization

/// Where the routes that read the store run: off libmicrohttpd's threads, as writes do (``WriteScheduler``).
///
/// libmicrohttpd gives each connection to one of its few worker threads for the connection's life, so a read that
/// waits on the store (the listing, `GET /v1/lists`, or a list loaded for a page or a session) would hold up every
/// other connection of its thread. Here the connection is suspended (a ``PendingResponse``, holding no thread)
/// while the read runs on a lane of its own, and resumed with its answer. The read lanes are not the write lanes:
/// a read waiting on the store holds up no write, and no stuck write holds up a read.
final class StoreReads: Sendable {
    /// How many reads can wait on the store at once, at most.
    static let laneCount = 4
    private let lanes = (0..<StoreReads.laneCount).map { DispatchQueue(label: "quire.store-reads.\($0)") }
    /// The lane of the next read (round robin).
    private let nextLane = Atomic<Int>(0)
    /// The reads queued or running.
    private let running = DispatchGroup()
    private let isShuttingDown = Atomic<Bool>(false)

    /// New reads are refused from now on (the service is shutting down, and its store is about to close).
    func stopTakingReads() {
        isShuttingDown.store(true, ordering: .releasing)
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
        let outcome = ResponseOnce()
        let pending = PendingResponse(onShutdown: { outcome.wait() })
        let lane = nextLane.add(1, ordering: .relaxed).oldValue % Self.laneCount
        lanes[lane].async(group: running) {
            let response = read()
            outcome.set(response)
            pending.resume(with: response)
        }
        return .deferred(pending)
    }

    /// Returns when no read is queued or running (at once when none is).
    func waitUntilIdle() {
        running.wait()
    }
}
