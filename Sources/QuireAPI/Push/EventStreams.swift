import Glibc
import QuireAuth
import QuireCore
import QuireHTTP
import Synchronization

/// The open event streams (openapi.yaml), one per session: each is a ``StreamingResponse`` whose connection
/// is suspended while its session's window does not move, woken by the write that moves it (the path long
/// polls take), by its heartbeat, or by the end of its session.
///
/// A ticker thread (once a second, or twice a heartbeat interval if that is shorter) wakes the streams whose
/// heartbeat is due and ends those whose token expired (a token's expiry is in whole seconds). It looks at a stream
/// only when the stream may be due (a ``TimerWheel``): once a heartbeat interval for an idle stream, so that a tick
/// costs the streams due then, not every stream open. And it wakes them a second's worth at a time, because
/// libmicrohttpd 0.9.75 resumes connections by walking every connection suspended on the thread
/// (`resume_suspended_connections`): each batch of wakes costs a step per stream held, and with 100,000 streams
/// one batch a second costs a quarter of four. A session's end reaches its stream from the session store (an
/// eviction, an expiry found by its sweep: ``SessionStore/observeRemovals(_:)``) or from the request that ended
/// it; the ticker's look once a heartbeat catches any other end.
final class EventStreams: Sendable {
    /// The most streams at once; more get `503 overloaded`.
    let capacity: Int
    let heartbeat: Duration
    /// The ticker's period, and how many of its ticks make a heartbeat interval (the wheel's reach).
    let period: Duration
    private let ticksPerHeartbeat: Int
    private let sessions: SessionStore
    private let state: Mutex<State>
    private let ticking = Atomic<Bool>(true)

    private struct State {
        var bySession: [String: EventStream] = [:]
        var byList: [String: [String: EventStream]] = [:]
        /// Every open stream, at the tick of its next look (a stream ended meanwhile is dropped then).
        var wheel: TimerWheel<EventStream>
        var isShutDown = false
    }

    /// - Parameter ticker: start the ticker thread (a test drives ``tick(now:wallClock:)`` itself without it).
    init(capacity: Int, heartbeatSeconds: Double, sessions: SessionStore, ticker: Bool = true) {
        self.capacity = capacity
        let heartbeat = Duration.milliseconds(Int(max(heartbeatSeconds, 0.01) * 1000))
        let period = min(.seconds(1), heartbeat / 2)
        let ticksPerHeartbeat = Int((heartbeat / period).rounded(.up))
        self.heartbeat = heartbeat
        self.period = period
        self.ticksPerHeartbeat = ticksPerHeartbeat
        self.sessions = sessions
        state = Mutex(State(wheel: TimerWheel(reach: ticksPerHeartbeat)))
        if ticker { startTicker(every: period) }
    }

    /// Streams waiting for the ticker's look (those open, and those ended since their last look).
    var scheduledCount: Int { state.withLock { $0.wheel.count } }

    /// Streams open now.
    var count: Int { state.withLock { $0.bySession.count } }

    /// Admits `stream`, ending the session's older stream if any.
    ///
    /// - Throws: `503 overloaded` past ``capacity`` or while shutting down.
    func open(_ stream: EventStream) throws(Problem) {
        let firstLook = ticksUntilLook(at: stream, idle: .zero, wallClock: TokenVerifier.now())
        let older: EventStream? = try state.withLock { state throws(Problem) in
            guard !state.isShutDown else {
                throw Problem.overloaded("The service is shutting down.", retryAfterSeconds: 1)
            }
            let older = state.bySession[stream.session]
            guard older != nil || state.bySession.count < capacity else {
                throw Problem.overloaded("Too many event streams are open; retry shortly.", retryAfterSeconds: 1)
            }
            state.bySession[stream.session] = stream
            state.byList[stream.list, default: [:]][stream.session] = stream
            state.wheel.schedule(stream, inTicks: firstLook)
            return older
        }
        older?.signal { $0.ended = true }
        // The stream itself is held, not weakly: a weak reference costs every stream a side table (a heap block of
        // its own, ~48 bytes of an idle stream, `scripts/bench.py streams`). The cycle it makes (the response
        // holds this closure, the stream holds the response) ends with the request, which takes the closure.
        stream.response.whenEnded { [weak self, stream] in
            self?.remove(stream)
        }
    }

    /// The window of every stream on `list` may have moved: each computes its next event.
    func notify(_ list: String) {
        let streams = state.withLock { $0.byList[list].map { Array($0.values) } ?? [] }
        for stream in streams { stream.signal { $0.changed = true } }
    }

    /// Ends the stream of `session`: with `event: gone` when the session ended, else just closed.
    func end(session: String, gone: Bool) {
        let stream = state.withLock { $0.bySession[session] }
        stream?.signal { if gone { $0.gone = true } else { $0.ended = true } }
    }

    /// Ends the streams of `ids` with `event: gone` (their sessions were evicted or expired).
    func endGone(sessions ids: [String]) {
        let streams = state.withLock { state in ids.compactMap { state.bySession[$0] } }
        for stream in streams { stream.signal { $0.gone = true } }
    }

    /// Makes the stream of `session` compute its next event again.
    func retry(session: String) {
        let stream = state.withLock { $0.bySession[session] }
        stream?.signal { $0.changed = true }
    }

    /// Ends every stream on `list` with `event: gone` (the list was deleted).
    func endAll(of list: String) {
        let streams = state.withLock { $0.byList[list].map { Array($0.values) } ?? [] }
        for stream in streams { stream.signal { $0.gone = true } }
    }

    /// Ends every stream with `event: gone` (the service is stopping: its sessions end) and refuses new ones;
    /// returns once each stream has sent it and ended, or after `patience` (the server's drain then ends those
    /// left after what they sent: a stream's end is never asked of its producer once the drain has begun).
    func shutdown(patience: Duration = .seconds(1)) {
        ticking.store(false, ordering: .relaxed)
        let streams = state.withLock { state in
            state.isShutDown = true
            return Array(state.bySession.values)
        }
        for stream in streams { stream.signal { $0.gone = true } }
        let deadline = ContinuousClock.now + patience
        while ContinuousClock.now < deadline && streams.contains(where: { !$0.response.isEnded }) {
            usleep(2_000)
        }
    }

    private func remove(_ stream: EventStream) {
        state.withLock { state in
            guard state.bySession[stream.session] === stream else { return }
            state.bySession[stream.session] = nil
            state.byList[stream.list]?[stream.session] = nil
            if state.byList[stream.list]?.isEmpty == true { state.byList[stream.list] = nil }
        }
    }

    /// One tick: the streams due now (and still open) get their heartbeat if they sent nothing for an interval, end
    /// if their token expired or their session is gone, and are scheduled for their next look.
    ///
    /// - Returns: how many streams it looked at.
    /// - Complexity: O(streams due), about (streams open) ÷ (ticks per heartbeat interval) a tick.
    @discardableResult
    func tick(now: ContinuousClock.Instant, wallClock: Double) -> Int {
        let due = state.withLock { state in state.wheel.advance().filter { state.bySession[$0.session] === $0 } }
        guard !due.isEmpty else { return 0 }
        var looks: [(EventStream, Int)] = []
        looks.reserveCapacity(due.count)
        for stream in due {
            if !sessions.contains(stream.session) {
                stream.signal { $0.gone = true }
                continue
            }
            if let until = stream.acceptedUntil, wallClock >= until {
                stream.signal { $0.ended = true }
                continue
            }
            var idle = now - stream.lastSent
            // A look comes a tick late at worst, never early but for the ticker's jitter: a quarter tick.
            if idle >= heartbeat - period / 4 {
                stream.signal { $0.heartbeat = true }
                idle = .zero
            }
            looks.append((stream, ticksUntilLook(at: stream, idle: idle, wallClock: wallClock)))
        }
        state.withLock { state in
            for (stream, ticks) in looks { state.wheel.schedule(stream, inTicks: ticks) }
        }
        return due.count
    }

    /// Ticks until `stream`, idle for `idle`, is next due: its heartbeat, or its token's expiry if sooner.
    private func ticksUntilLook(at stream: EventStream, idle: Duration, wallClock: Double) -> Int {
        var ticks = Int(((heartbeat - idle) / period).rounded(.up))
        if let until = stream.acceptedUntil {
            let seconds = Double(period.components.seconds) + Double(period.components.attoseconds) / 1e18
            let untilExpiry = ((until - wallClock) / seconds).rounded(.up)
            if untilExpiry < Double(ticks) { ticks = Int(max(untilExpiry, 1)) }
        }
        return max(ticks, 1)
    }

    private func startTicker(every period: Duration) {
        let seconds = Double(period.components.seconds) + Double(period.components.attoseconds) / 1e18
        let micros = UInt32(max(1_000, seconds * 1e6))
        DetachedThread.start { [weak self] in
            while let streams = self, streams.ticking.load(ordering: .relaxed) {
                streams.tick(now: .now, wallClock: TokenVerifier.now())
                usleep(micros)
            }
        }
    }
}

/// One session's open stream: what its producer is told (by writes, the ticker, other requests), and the
/// response it feeds.
final class EventStream: Sendable {
    struct Signals: Sendable {
        /// The list changed (or the stream just opened): compute the next event.
        var changed = true
        var heartbeat = false
        /// The session ended: send `event: gone`, then end.
        var gone = false
        /// End without an event (a newer stream, an expired token, shutdown).
        var ended = false
        /// The window the client named when opening; afterwards, events follow the session's current one.
        var position: SessionPosition?
        /// Whether the opening comment was sent.
        var opened = false
    }

    let session: String
    let list: String
    /// When the caller's token stops being accepted (seconds since 1970), if it does.
    let acceptedUntil: Double?
    let response: StreamingResponse
    private let state: State

    /// What the producer and the others share.
    private final class State: Sendable {
        let signals: Mutex<Signals>
        let lastSent = Mutex(ContinuousClock.now)

        init(_ signals: Signals) {
            self.signals = Mutex(signals)
        }
    }

    /// - Parameter produce: gives the next piece of the stream from the signals taken.
    init(
        session: String, list: String, position: SessionPosition?, acceptedUntil: Double?, headers: HTTPHeaders,
        produce: @escaping @Sendable (Signals) -> StreamingResponse.Next
    ) {
        self.session = session
        self.list = list
        self.acceptedUntil = acceptedUntil
        let state = State(Signals(position: position))
        self.state = state
        response = StreamingResponse(headers: headers) {
            let taken = state.signals.withLock { signals in
                let taken = signals
                signals.changed = false
                signals.heartbeat = false
                signals.position = nil
                signals.opened = true
                if signals.gone { signals.ended = true }
                return taken
            }
            let next = produce(taken)
            if case .send = next { state.lastSent.withLock { $0 = .now } }
            return next
        }
    }

    /// What the producer takes when it next runs.
    var pendingSignals: Signals { state.signals.withLock { $0 } }

    /// When the stream last sent something.
    var lastSent: ContinuousClock.Instant { state.lastSent.withLock { $0 } }

    /// Changes the signals and wakes the stream.
    func signal(_ change: (inout Signals) -> Void) {
        state.signals.withLock { change(&$0) }
        response.wake()
    }
}
