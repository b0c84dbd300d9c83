import QuireAuth
import QuireCore
import QuireHTTP
import Synchronization
import Testing

@testable import QuireAPI

/// The streams' ticker at many streams: a tick looks at the streams due then (a timer wheel), not at every stream
/// open, and a session evicted or expired reaches its stream from the session store without any tick.
@Suite("stream ticker")
struct StreamTickerTests {
    @Test("a timer wheel gives each element back at its tick, clamped to its reach, and holds what is not yet due")
    func timerWheel() {
        var wheel = TimerWheel<Int>(reach: 10)
        for element in 0..<1_000 { wheel.schedule(element, inTicks: element % 12) }  // 0 and 11: clamped to 1 and 10
        #expect(wheel.count == 1_000)
        var seen = 0
        for tick in 1...10 {
            let due = wheel.advance()
            let expected = (0..<1_000).filter { min(max($0 % 12, 1), 10) == tick }
            #expect(due.sorted() == expected, "tick \(tick)")
            seen += due.count
        }
        #expect(seen == 1_000 && wheel.count == 0)
        #expect(wheel.advance().isEmpty)
        // The ring goes round: an element scheduled after many ticks is due as many ticks later.
        for _ in 0..<37 { _ = wheel.advance() }
        wheel.schedule(7, inTicks: 3)
        #expect(wheel.advance().isEmpty && wheel.advance().isEmpty && wheel.advance() == [7])
    }

    private static func sessionStore(capacity: Int) -> SessionStore {
        SessionStore(capacity: capacity, idleSeconds: 60)
    }

    private static func session(_ id: String) throws -> Session {
        let version = try ListVersion(document: ["sections": [["id": "s", "items": [["id": "1", "type": "t"]]]]])
        return Session(
            id: id, list: "feed", format: .batch, limit: 1,
            window: SessionWindow(version.firstPage(limit: 1), of: version))
    }

    private static func stream(_ session: String, acceptedUntil: Double? = nil) -> EventStream {
        EventStream(
            session: session, list: "feed", position: nil, acceptedUntil: acceptedUntil, headers: HTTPHeaders()
        ) { _ in .wait }
    }

    @Test("10,000 streams opened over a heartbeat interval: each tick looks at those due, each gets its heartbeat")
    func heartbeatWalk() throws {
        let store = Self.sessionStore(capacity: 20_000)
        // A heartbeat of 10 s: ticks of 1 s, ten to an interval.
        let streams = EventStreams(capacity: 20_000, heartbeatSeconds: 10, sessions: store, ticker: false)
        #expect(streams.period == .seconds(1))
        let start = ContinuousClock.now
        let wallClock = TokenVerifier.now()
        // 1,000 streams opened before each of the first ten ticks, then ten ticks more. A stream is first due a
        // heartbeat interval (ten ticks) after it opened: batch b (opened before tick b + 1) at tick b + 10.
        var opened: [[EventStream]] = []
        for tick in 1...19 {
            if tick <= 10 {
                opened.append(
                    try (0..<1_000).map { _ in
                        let id = SessionID.generate()
                        store.insert(try Self.session(id))
                        let stream = Self.stream(id)
                        try streams.open(stream)
                        return stream
                    })
            }
            let looked = streams.tick(now: start + .seconds(tick), wallClock: wallClock + Double(tick))
            let due = tick - 10
            #expect(looked == (due >= 0 ? 1_000 : 0), "tick \(tick)")
            #expect(streams.scheduledCount == opened.count * 1_000, "tick \(tick)")
            // The batch due has its heartbeat to send (idle a whole interval), the next batch not yet.
            if due >= 0 { #expect(opened[due].allSatisfy { $0.pendingSignals.heartbeat }, "tick \(tick)") }
            if due + 1 >= 0, due + 1 < opened.count {
                #expect(opened[due + 1].allSatisfy { !$0.pendingSignals.heartbeat }, "tick \(tick)")
            }
        }
        #expect(streams.count == 10_000)
    }

    @Test("a stream whose token expires ends at the tick of its expiry, not a heartbeat later")
    func tokenExpiry() throws {
        let store = Self.sessionStore(capacity: 100)
        let streams = EventStreams(capacity: 100, heartbeatSeconds: 30, sessions: store, ticker: false)
        let start = ContinuousClock.now
        let wallClock = TokenVerifier.now()
        let ids = (0..<2).map { _ in SessionID.generate() }
        for id in ids { store.insert(try Self.session(id)) }
        let expiring = Self.stream(ids[0], acceptedUntil: wallClock + 2.5)
        let lasting = Self.stream(ids[1])
        try streams.open(expiring)
        try streams.open(lasting)
        for tick in 1...2 { streams.tick(now: start + .seconds(tick), wallClock: wallClock + Double(tick)) }
        #expect(!expiring.pendingSignals.ended)
        #expect(streams.tick(now: start + .seconds(3), wallClock: wallClock + 3) == 1)
        #expect(expiring.pendingSignals.ended && !lasting.pendingSignals.ended)
    }

    @Test("sessions evicted or expired under 4,096 open streams: their streams, and only theirs, are told gone at once")
    func evictionUnderManyStreams() throws {
        let now = Atomic<UInt64>(0)
        let store = SessionStore(capacity: 4_096, idleSeconds: 60) { now.load(ordering: .relaxed) }
        let streams = EventStreams(capacity: 10_000, heartbeatSeconds: 15, sessions: store, ticker: false)
        store.observeRemovals { ids in streams.endGone(sessions: ids) }
        var byID: [String: EventStream] = [:]
        for index in 0..<4_096 {
            let id = SessionID.generate()
            now.store(UInt64(index), ordering: .relaxed)
            store.insert(try Self.session(id))
            byID[id] = Self.stream(id)
            try streams.open(byID[id]!)
        }
        #expect(store.evictionCount == 0 && byID.values.allSatisfy { !$0.pendingSignals.gone })
        // 100 more sessions: 100 evicted, the stalest, whose streams are told at once, without a tick.
        for index in 0..<100 {
            now.store(UInt64(10_000 + index), ordering: .relaxed)
            store.insert(try Self.session(SessionID.generate()))
        }
        #expect(store.evictionCount == 100)
        let gone = byID.filter { $0.value.pendingSignals.gone }
        #expect(gone.count == 100)
        #expect(gone.keys.allSatisfy { !store.contains($0) })
        #expect(byID.filter { !$0.value.pendingSignals.gone }.keys.allSatisfy { store.contains($0) })
        // Past the idle timeout, the sweep expires every session: every stream left is told.
        now.store(UInt64(61e9) + 20_000, ordering: .relaxed)
        store.sweep()
        #expect(store.expirationCount == 4_096)
        #expect(byID.values.allSatisfy { $0.pendingSignals.gone })
    }
}
