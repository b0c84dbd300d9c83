import Dispatch
import QuireHTTP
import Synchronization

/// Where the routes that write to the store run: off libmicrohttpd's threads.
///
/// libmicrohttpd gives each connection to one of its few worker threads, for the connection's life. A write
/// that waits on the store (a PostgreSQL commit, up to `statementTimeout` and more when the database goes
/// away) held its worker thread that long, and every request of every other connection of that thread waited
/// behind it: reads stopped answering on half the connections during a database outage (seen by the cluster
/// test). Here the write's connection is suspended (a ``PendingResponse``, holding no thread) while the write
/// runs on a queue of its own, and resumed with its answer.
///
/// A write always answers with its own outcome: on shutdown, a write still running is waited for (its
/// commit is neither lost nor answered as refused), and ``waitUntilIdle()`` lets the service wait for every
/// write before its store is closed. A write that arrives once the service is shutting down is not made: it
/// is refused at once (`503 overloaded`, `Retry-After`), rather than started and waited for on the thread
/// that received it while that thread's other connections drain.
final class StoreWrites: Sendable {
    private let queue = DispatchQueue(label: "quire.store-writes", attributes: .concurrent)
    /// The writes queued or running.
    private let running = DispatchGroup()
    private let isShuttingDown = Atomic<Bool>(false)

    /// New writes are refused from now on (the service is shutting down).
    func stopTakingWrites() {
        isShuttingDown.store(true, ordering: .releasing)
    }

    /// The reply of `write`, made on the write queue; the connection waits suspended until it is ready.
    func deferred(_ write: @escaping @Sendable () -> Response) -> Reply {
        if isShuttingDown.load(ordering: .acquiring) {
            return .response(
                Problem.overloaded(
                    "The service is shutting down: nothing was written. Retry (another instance, or this one once it is back).",
                    retryAfterSeconds: 1, written: .no
                ).response)
        }
        let outcome = Outcome()
        let pending = PendingResponse(onShutdown: { outcome.wait() })
        queue.async(group: running) {
            let response = write()
            outcome.set(response)
            pending.resume(with: response)
        }
        return .deferred(pending)
    }

    /// Returns when no write is queued or running (at once when none is).
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
