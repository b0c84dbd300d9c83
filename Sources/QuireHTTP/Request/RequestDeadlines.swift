internal import CMicroHTTPD
import Glibc
import Logging
import Synchronization

/// The whole-request deadline: a request must arrive whole (line, headers, body) within
/// `timeoutSeconds` of its request line, or its connection is cut. libmicrohttpd's own timeout only
/// counts idle time, so a client trickling a byte now and then would hold a connection forever.
///
/// A watcher thread shuts down the socket of every late request; libmicrohttpd then sees the
/// connection fail and closes it itself.
///
/// Every request passes here twice, so it takes no lock and allocates nothing: a request that is
/// arriving has its deadline in the word of its socket number (a socket serves one request at a time),
/// written and cleared atomically; the watcher scans the words up to the highest socket seen. Deadlines
/// are in milliseconds of a clock the watcher advances at each tick, so a request reads no clock either
/// (a deadline is at most one tick early: 50 to 250 ms of a 30 s timeout).
///
/// A socket number is never shut down after it was closed (and perhaps reused): the watcher marks the
/// word `cutting` before its `shutdown(2)` and clears it after, and a request's end waits while the word
/// of its socket says `cutting`; libmicrohttpd closes a socket only after the request's end.
final class RequestDeadlines: Sendable {
    /// The word of a socket being shut down by the watcher.
    private static let cutting = UInt64.max

    /// One word per socket number below `capacity`: 0 when no request is arriving there.
    ///
    /// `@unchecked Sendable` is safe: the pointer never changes, the memory is freed only in `deinit`,
    /// and every access to a word goes through the atomic functions of the C shim.
    private struct Words: @unchecked Sendable {
        let base: UnsafeMutablePointer<UInt64>
        let capacity: Int
    }

    private let words: Words
    /// The highest socket number a request has started on: the watcher scans up to it.
    private let highest = Atomic<Int>(-1)
    /// Milliseconds since `origin`, as of the watcher's last tick.
    private let now = Atomic<UInt64>(1)
    private let origin = ContinuousClock.now
    private let timeout: UInt64
    private let logger: Logger
    private let watching = Atomic<Bool>(false)
    private let cut = Atomic<Int>(0)

    /// - Parameter sockets: how many socket numbers can be tracked (the descriptor limit); a request on a
    ///   socket past it is not watched.
    init(timeoutSeconds: Double, logger: Logger, sockets: Int = RequestDeadlines.descriptorLimit()) {
        timeout = UInt64(max(1, timeoutSeconds * 1000))
        self.logger = logger
        let capacity = max(1, min(sockets, 1 << 22))
        // calloc: the pages of sockets never used are never touched, so they cost no memory.
        let base = calloc(capacity, MemoryLayout<UInt64>.stride)!.bindMemory(to: UInt64.self, capacity: capacity)
        words = Words(base: base, capacity: capacity)
    }

    deinit {
        free(words.base)
    }

    /// The soft limit of open descriptors: socket numbers are below it.
    static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1 << 16 }
        return Int(clamping: limit.rlim_cur)
    }

    /// Requests cut since start.
    var cutCount: Int { cut.load(ordering: .relaxed) }

    /// A request line arrived on `socket`.
    func started(socket: Int32) {
        let index = Int(socket)
        guard index >= 0 && index < words.capacity else { return }
        if index > highest.load(ordering: .relaxed) { raiseHighest(to: index) }
        quire_atomic_store_u64(words.base + index, now.load(ordering: .relaxed) + timeout)
    }

    /// The request on `socket` arrived whole, or ended: it is no longer watched. Idempotent.
    func finished(socket: Int32) {
        let index = Int(socket)
        guard index >= 0 && index < words.capacity else { return }
        let word = words.base + index
        while true {
            let value = quire_atomic_load_u64(word)
            if value == 0 { return }
            if value == Self.cutting {  // the watcher is shutting it down: microseconds
                sched_yield()
                continue
            }
            if quire_atomic_replace_u64(word, value, 0) != 0 { return }
        }
    }

    private func raiseHighest(to index: Int) {
        var seen = highest.load(ordering: .relaxed)
        while seen < index {
            let (exchanged, original) = highest.compareExchange(
                expected: seen, desired: index, ordering: .relaxed)
            if exchanged { return }
            seen = original
        }
    }

    func startWatching() {
        guard watching.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        let tick = UInt32(max(50_000, min(250_000, Int(timeout) * 100)))
        DetachedThread.start { [self] in
            while watching.load(ordering: .relaxed) {
                usleep(tick)
                cutLateRequests(now: advance())
            }
        }
    }

    func stopWatching() {
        watching.store(false, ordering: .relaxed)
    }

    /// Moves the clock of deadlines to the present; returns it.
    private func advance() -> UInt64 {
        let elapsed = ContinuousClock.now - origin
        let milliseconds =
            UInt64(elapsed.components.seconds) * 1000
            + UInt64(elapsed.components.attoseconds / 1_000_000_000_000_000) + 1
        now.store(milliseconds, ordering: .relaxed)
        return milliseconds
    }

    private func cutLateRequests(now: UInt64) {
        var count = 0
        let last = min(highest.load(ordering: .relaxed), words.capacity - 1)
        if last >= 0 {
            for index in 0...last {
                let word = words.base + index
                let deadline = quire_atomic_load_u64(word)
                guard deadline != 0 && deadline != Self.cutting && deadline <= now,
                    quire_atomic_replace_u64(word, deadline, Self.cutting) != 0
                else { continue }
                shutdown(Int32(index), Int32(SHUT_RDWR))
                quire_atomic_store_u64(word, 0)
                count += 1
            }
        }
        if count > 0 {
            cut.add(count, ordering: .relaxed)
            logger.notice("cut requests that did not arrive in time", metadata: ["requests": "\(count)"])
        }
    }
}
