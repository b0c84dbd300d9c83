import Glibc
import QuireAuth
import QuireCore
import QuireHTTP
import Synchronization

/// The open event streams (openapi.yaml), one per session: each is a ``StreamingResponse`` whose connection
/// is suspended while its session's window does not move, woken by the write that moves it (the path long
/// polls take), by its heartbeat, or by the end of its session.
///
/// A ticker thread (every quarter of a second at most) wakes the streams whose heartbeat is due, ends
/// those whose session is gone (expired, evicted) with `event: gone`, and those whose token expired.
final class EventStreams: Sendable {
    /// The most streams at once; more get `503 overloaded`.
    let capacity: Int
    let heartbeat: Duration
    private let sessions: SessionStore
    private let state = Mutex(State())
    private let ticking = Atomic<Bool>(true)

    private struct State {
        var bySession: [String: EventStream] = [:]
        var byList: [String: [String: EventStream]] = [:]
        var isShutDown = false
    }

    init(capacity: Int, heartbeatSeconds: Double, sessions: SessionStore) {
        self.capacity = capacity
        self.heartbeat = .milliseconds(Int(max(heartbeatSeconds, 0.01) * 1000))
        self.sessions = sessions
        startTicker(every: min(.milliseconds(250), heartbeat / 2))
    }

    /// Streams open now.
    var count: Int { state.withLock { $0.bySession.count } }

    /// Admits `stream`, ending the session's older stream if any.
    ///
    /// - Throws: `503 overloaded` past ``capacity`` or while shutting down.
    func open(_ stream: EventStream) throws(Problem) {
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

    /// One pass of the ticker: heartbeats, sessions gone, tokens expired.
    func tick(now: ContinuousClock.Instant, wallClock: Double) {
        let streams = state.withLock { Array($0.bySession.values) }
        for stream in streams {
            if !sessions.contains(stream.session) {
                stream.signal { $0.gone = true }
            } else if let until = stream.acceptedUntil, wallClock >= until {
                stream.signal { $0.ended = true }
            } else if now - stream.lastSent >= heartbeat {
                stream.signal { $0.heartbeat = true }
            }
        }
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

    /// When the stream last sent something.
    var lastSent: ContinuousClock.Instant { state.lastSent.withLock { $0 } }

    /// Changes the signals and wakes the stream.
    func signal(_ change: (inout Signals) -> Void) {
        state.signals.withLock { change(&$0) }
        response.wake()
    }
}
