import Dispatch
import Glibc
import QuireHTTP
import Synchronization

/// Requests waiting for a list to change (`changes?wait=`): each is a suspended ``PendingResponse``
/// that holds no thread, answered by the write that changes its list, by its own deadline, or by the
/// shutdown — exactly once, whichever comes first.
///
/// A ticker thread answers expired waiters (every `tick`, so a waiter whose client went away is
/// released at its deadline at the latest). Answers are computed off the writer's thread, in parallel.
final class LongPolls: Sendable {
    /// Why a waiter is answered.
    enum Wake: Sendable {
        case changed
        case timedOut
        case shuttingDown
    }

    typealias Answer = @Sendable (Wake) -> Response

    private struct Waiter: Sendable {
        let pending: PendingResponse
        let answer: Answer
    }

    private struct State {
        var byList: [String: [UInt64: Waiter]] = [:]
        var lists: [UInt64: String] = [:]
        var deadlines = DeadlineHeap()
        var nextID: UInt64 = 0
        var isShutDown = false
    }

    private let state = Mutex(State())
    private let waiting = Atomic<Int>(0)
    /// The most waiters at once; more get `503 overloaded`.
    let capacity: Int
    private let tickMilliseconds: Int
    private let ticking = Atomic<Bool>(true)

    init(capacity: Int, tickMilliseconds: Int = 20) {
        self.capacity = capacity
        self.tickMilliseconds = tickMilliseconds
        startTicker()
    }

    /// The number of requests waiting.
    var count: Int { waiting.load(ordering: .relaxed) }

    /// Parks a request until `list` changes or `seconds` pass.
    ///
    /// - Returns: the reply to give libmicrohttpd (deferred).
    /// - Throws: `503 overloaded` when `capacity` waiters already wait, or the service is shutting down.
    func wait(on list: String, seconds: Double, answer: @escaping Answer) throws(Problem) -> Reply {
        let pending = PendingResponse { answer(.shuttingDown) }
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let admitted: Bool = state.withLock { state in
            guard !state.isShutDown, waiting.load(ordering: .relaxed) < capacity else { return false }
            state.nextID += 1
            let id = state.nextID
            state.byList[list, default: [:]][id] = Waiter(pending: pending, answer: answer)
            state.lists[id] = list
            state.deadlines.push(id: id, deadline: deadline)
            waiting.add(1, ordering: .relaxed)
            return true
        }
        guard admitted else {
            throw Problem.overloaded("Too many requests are waiting for changes; retry shortly.", retryAfterSeconds: 1)
        }
        return .deferred(pending)
    }

    /// Answers every waiter of `list` (its list changed). Returns at once; the answers are computed on
    /// worker threads.
    func notify(_ list: String) {
        let waiters: [Waiter] = state.withLock { state in
            guard let waiters = state.byList.removeValue(forKey: list) else { return [] }
            for id in waiters.keys { state.lists[id] = nil }
            return Array(waiters.values)
        }
        resolve(waiters, .changed)
    }

    /// Answers every waiter and refuses new ones.
    func shutdown() {
        ticking.store(false, ordering: .relaxed)
        let waiters: [Waiter] = state.withLock { state in
            state.isShutDown = true
            let all = state.byList.values.flatMap(\.values)
            state.byList = [:]
            state.lists = [:]
            return all
        }
        for waiter in waiters {
            waiter.pending.resume(with: waiter.answer(.shuttingDown))
        }
        waiting.subtract(waiters.count, ordering: .relaxed)
    }

    private func resolve(_ waiters: [Waiter], _ wake: Wake) {
        guard !waiters.isEmpty else { return }
        waiting.subtract(waiters.count, ordering: .relaxed)
        let batches = Swift.min(waiters.count, HTTPServer.Configuration.coreCount * 4)
        DispatchQueue.global().async {
            DispatchQueue.concurrentPerform(iterations: batches) { batch in
                for index in stride(from: batch, to: waiters.count, by: batches) {
                    let waiter = waiters[index]
                    waiter.pending.resume(with: waiter.answer(wake))
                }
            }
        }
    }

    /// Answers the waiters whose deadline passed.
    private func expire(now: ContinuousClock.Instant) {
        let expired: [Waiter] = state.withLock { state in
            var expired: [Waiter] = []
            while let id = state.deadlines.popExpired(now: now) {
                guard let list = state.lists.removeValue(forKey: id) else { continue }  // already answered
                if let waiter = state.byList[list]?.removeValue(forKey: id) { expired.append(waiter) }
                if state.byList[list]?.isEmpty == true { state.byList[list] = nil }
            }
            return expired
        }
        resolve(expired, .timedOut)
    }

    private func startTicker() {
        let tick = UInt32(tickMilliseconds * 1000)
        DetachedThread.start { [weak self] in
            while let polls = self, polls.ticking.load(ordering: .relaxed) {
                polls.expire(now: .now)
                usleep(tick)
            }
        }
    }
}

/// A min-heap of (deadline, id), for the waiters' timeouts.
struct DeadlineHeap {
    private var entries: [(deadline: ContinuousClock.Instant, id: UInt64)] = []

    var isEmpty: Bool { entries.isEmpty }

    mutating func push(id: UInt64, deadline: ContinuousClock.Instant) {
        entries.append((deadline, id))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Pops the earliest entry if its deadline is not after `now`.
    mutating func popExpired(now: ContinuousClock.Instant) -> UInt64? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < entries.count && entries[left].deadline < entries[smallest].deadline { smallest = left }
                if right < entries.count && entries[right].deadline < entries[smallest].deadline { smallest = right }
                if smallest == parent { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first.id
    }
}
