import Glibc
import Logging
import Synchronization

/// The whole-request deadline: a request must arrive whole (line, headers, body) within
/// `timeoutSeconds` of its request line, or its connection is cut. libmicrohttpd's own timeout only
/// counts idle time, so a client trickling a byte now and then would hold a connection forever.
///
/// A watcher thread shuts down the socket of every late request; libmicrohttpd then sees the
/// connection fail and closes it itself. The socket is shut down under the same lock that removes the
/// request on completion, and libmicrohttpd closes a socket only after the request's completion
/// callback, so a socket number is never shut down after it was closed (and perhaps reused).
final class RequestDeadlines: Sendable {
    private struct Arriving {
        let socket: Int32
        let deadline: ContinuousClock.Instant
    }

    private let arriving = Mutex<[ObjectIdentifier: Arriving]>([:])
    private let timeout: Duration
    private let logger: Logger
    private let watching = Atomic<Bool>(false)
    private let cut = Atomic<Int>(0)

    init(timeoutSeconds: Double, logger: Logger) {
        timeout = .milliseconds(Int64(timeoutSeconds * 1000))
        self.logger = logger
    }

    /// Requests cut since start.
    var cutCount: Int { cut.load(ordering: .relaxed) }

    func started(_ request: AnyObject, socket: Int32) {
        guard socket >= 0 else { return }
        let entry = Arriving(socket: socket, deadline: .now + timeout)
        arriving.withLock { $0[ObjectIdentifier(request)] = entry }
    }

    func finished(_ request: AnyObject) {
        _ = arriving.withLock { $0.removeValue(forKey: ObjectIdentifier(request)) }
    }

    func startWatching() {
        guard watching.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        let tick = UInt32(max(50_000, min(250_000, Int(timeout.components.seconds) * 100_000)))
        DetachedThread.start { [self] in
            while watching.load(ordering: .relaxed) {
                usleep(tick)
                cutLateRequests(now: .now)
            }
        }
    }

    func stopWatching() {
        watching.store(false, ordering: .relaxed)
    }

    private func cutLateRequests(now: ContinuousClock.Instant) {
        let count = arriving.withLock { arriving in
            let late = arriving.filter { $0.value.deadline <= now }
            for (key, entry) in late {
                shutdown(entry.socket, Int32(SHUT_RDWR))
                arriving[key] = nil
            }
            return late.count
        }
        if count > 0 {
            cut.add(count, ordering: .relaxed)
            logger.notice("cut requests that did not arrive in time", metadata: ["requests": "\(count)"])
        }
    }
}
