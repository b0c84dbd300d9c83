import Foundation
import QuireClient
import QuireCore
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

@testable import QuireAPI

/// A client's windows by `seq`: every answer is applied to the window of its `fromSeq`, so that answers
/// arriving on two channels (a stream and the client's own requests) in any order end exact.
struct SeqWindows {
    let format: String
    private(set) var windows: [Int: ClientWindow] = [:]
    private(set) var latest = 0

    init(format: String, creation: [String: Any]) throws {
        self.format = format
        windows[1] = try ClientWindow(pageSections: JSONSerialization.data(withJSONObject: creation["sections"]!))
        latest = 1
    }

    /// Applies one answer (of a request or an event); `false` when its `fromSeq` is unknown here.
    @discardableResult
    mutating func apply(_ answer: [String: Any]) throws -> Bool {
        let seq = try #require(answer["seq"] as? Int, "an answer without seq: \(answer)")
        let from = try #require(answer["fromSeq"] as? Int)
        guard seq != from else { return true }  // nothing moved
        var window: ClientWindow
        if let reset = answer["reset"] as? [String: Any] {
            window = try ClientWindow(pageSections: JSONSerialization.data(withJSONObject: reset["sections"]!))
        } else {
            guard let base = windows[from] else { return false }
            window = base
            let changes = try JSONSerialization.data(withJSONObject: answer["changes"]!)
            if format == "batch" { try window.apply(batch: changes) } else { try window.apply(sequential: changes) }
        }
        windows[seq] = window
        latest = max(latest, seq)
        return true
    }

    var current: ClientWindow? { windows[latest] }
}

/// Event streams over real HTTP (openapi.yaml) and answer sequence numbers (`seq`).
@Suite("Event streams", .serialized)
struct EventStreamTests {
    static func fixture(_ configure: (inout QuireService.Configuration) -> Void = { _ in }) throws -> APIFixture {
        try APIFixture { configuration in
            configuration.events.heartbeatSeconds = 30
            configure(&configuration)
        }
    }

    static func session(_ fixture: APIFixture, list: String, _ options: [String: Any] = [:]) throws -> [String: Any] {
        let response = try fixture.call("POST", "/v1/lists/\(list)/sessions", json: options)
        try #require(response.status == 201, "\(response.text)")
        return try response.object()
    }

    static func insert(_ fixture: APIFixture, _ list: String, id: String, after: String? = nil) throws {
        var op: [String: Any] = ["op": "insertItems", "section": "sec-0", "items": [["id": id, "type": "row"]]]
        if let after { op["after"] = after }
        try fixture.ops(list, [op])
    }

    // MARK: seq

    @Test("seq: 1 on creation, +1 per answer that moves the window, seq= in query and body, 409 with seq")
    func sequenceNumbers() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 30, childrenEvery: 10))
        let created = try Self.session(fixture, list: "feed", ["limit": 10])
        let id = created["session"] as! String
        #expect(created["seq"] as? Int == 1)
        // An extend without a write: the same version, a new window; seq tells them apart.
        let extended = try fixture.call("GET", "/v1/sessions/\(id)/changes?seq=1&extend=next").object()
        #expect(extended["seq"] as? Int == 2)
        #expect(extended["fromSeq"] as? Int == 1)
        #expect(extended["from"] as? Int == extended["version"] as? Int)
        // Nothing moved: the same seq.
        let unchanged = try fixture.call("GET", "/v1/sessions/\(id)/changes?seq=2").object()
        #expect(unchanged["seq"] as? Int == 2 && unchanged["fromSeq"] as? Int == 2)
        // A retry from the window before gives a new seq, never the lost answer's again.
        let retried = try fixture.call("GET", "/v1/sessions/\(id)/changes?seq=1&extend=next").object()
        #expect(retried["seq"] as? Int == 3 && retried["fromSeq"] as? Int == 1)
        // In a body.
        let expanded = try fixture.call("POST", "/v1/sessions/\(id)/expand", json: ["seq": 3, "id": "s0-0"])
        #expect(expanded.status == 200)
        #expect(try expanded.object()["seq"] as? Int == 4)
        let reset = try fixture.call("POST", "/v1/sessions/\(id)/reset", json: [:]).object()
        #expect(reset["seq"] as? Int == 5 && reset["fromSeq"] as? Int == 4)
        // The window before the current one (4) and the current one (5) only.
        let stale = try fixture.call("GET", "/v1/sessions/\(id)/changes?seq=3")
        #expect(stale.status == 409)
        #expect(try stale.problemSlug() == "since-mismatch")
        #expect(try stale.object()["seq"] as? Int == 5)
        #expect(try stale.object()["version"] as? Int == 1)
        #expect(try fixture.call("GET", "/v1/sessions/\(id)/changes?seq=4").status == 200)
        // Both, or neither, or not a number: 400.
        for query in ["since=1&seq=5", "", "seq=x", "seq=0"] {
            let bad = try fixture.call("GET", "/v1/sessions/\(id)/changes?\(query)")
            #expect(bad.status == 400, "\(query)")
            #expect(try bad.problemSlug() == "invalid-request")
        }
        let badBody = try fixture.call("POST", "/v1/sessions/\(id)/collapse", json: ["seq": "1", "id": "s0-0"])
        #expect(badBody.status == 400)
    }

    // MARK: Streams

    @Test("an event arrives within 100 ms of a write, as changes would answer it, with its seq as id")
    func eventAfterWrite() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 20))
        let created = try Self.session(fixture, list: "feed", ["limit": 10])
        let id = created["session"] as! String
        let reader = try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\(id)/events?seq=1")
        try reader.readHead()
        #expect(reader.status == 200)
        #expect(reader.headers["content-type"]?.hasPrefix("text/event-stream") == true)
        #expect(reader.headers["x-accel-buffering"] == "no")
        #expect(reader.headers["cache-control"] == "no-store")
        #expect(reader.wait(seconds: 2) { $0.trailingComments.count > 0 })  // the opening comment
        var windows = try SeqWindows(format: "batch", creation: created)
        var worst = Duration.zero
        for round in 0..<5 {
            let clock = ContinuousClock()
            let start = clock.now
            try Self.insert(fixture, "feed", id: "new-\(round)", after: "s0-1")
            let written = clock.now
            let events = reader.waitForEvents(round + 1, seconds: 2)
            try #require(events.count == round + 1)
            worst = max(worst, clock.now - written)
            _ = start
            let event = events[round]
            #expect(event.event == "changes")
            let answer = try event.object()
            #expect(event.id == "\(answer["seq"] as! Int)")
            #expect(answer["seq"] as? Int == round + 2)
            #expect(try windows.apply(answer))
        }
        #expect(worst < .milliseconds(100), "slowest event: \(worst)")
        #expect(windows.current == (try fixture.freshWindow(ofSession: id)))
        #expect(fixture.service.context.streams.count == 1)
        #expect(try fixture.call("GET", "/metrics").text.contains("quire_event_streams_open 1"))
    }

    @Test("a stream read through a gzip decoder delivers each event at once, not with the next one")
    func compressedStream() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 20))
        let created = try Self.session(fixture, list: "feed", ["limit": 10])
        let id = created["session"] as! String
        let reader = try EventStreamReader(
            port: fixture.server.port, target: "/v1/sessions/\(id)/events?seq=1",
            headers: [("Accept-Encoding", "gzip")])
        try reader.readHead()
        #expect(reader.status == 200)
        #expect(reader.headers["content-encoding"] == "gzip")
        #expect(reader.headers["vary"] == "Accept-Encoding")
        #expect(reader.wait(seconds: 2) { $0.trailingComments.count > 0 })  // the opening comment, decoded
        var windows = try SeqWindows(format: "batch", creation: created)
        for round in 0..<3 {
            try Self.insert(fixture, "feed", id: "zipped-\(round)", after: "s0-1")
            // Each event decodes whole before any other write: nothing waits in the compressor.
            let events = reader.waitForEvents(round + 1, seconds: 2)
            try #require(events.count == round + 1)
            #expect(events[round].event == "changes")
            #expect(try windows.apply(events[round].object()))
        }
        #expect(windows.current == (try fixture.freshWindow(ofSession: id)))
        // Ended with the gzip trailer: the whole body decodes.
        _ = try fixture.call("DELETE", "/v1/sessions/\(id)")
        #expect(reader.waitForEnd(seconds: 5))
        #expect(reader.takeEvents().contains { $0.event == "gone" })
    }

    @Test("a reader that stops reading for several writes gets one coalesced event that leaves it exact")
    func slowReaderCoalesced() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 40))
        let created = try Self.session(fixture, list: "feed", ["limit": 40])
        let id = created["session"] as! String
        let reader = try EventStreamReader(
            port: fixture.server.port, target: "/v1/sessions/\(id)/events", receiveBuffer: 4096)
        try reader.readHead()
        // Each write rewrites every item of the window with 20 KB: an event of 800 KB; a few fill the
        // socket buffers. The reader reads nothing meanwhile.
        let writes = 16
        let big = String(repeating: "x", count: 20_000)
        for round in 0..<writes {
            let items = (0..<40).map { ["id": "s0-\($0)", "type": "row", "data": ["round": round, "text": big]] }
            try fixture.ops("feed", [["op": "updateItems", "items": items]])
        }
        usleep(300_000)
        reader.wait(seconds: 20) { reader in
            // Done once an event carries the last version.
            (try? reader.events.last?.object()["version"] as? Int) == writes + 1
        }
        let events = reader.events
        var windows = try SeqWindows(format: "batch", creation: created)
        for event in events { #expect(try windows.apply(event.object())) }
        #expect(events.count < writes, "\(events.count) events for \(writes) writes: no coalescing")
        #expect(events.count >= 1)
        #expect(windows.current == (try fixture.freshWindow(ofSession: id)))
    }

    @Test("Last-Event-ID resumes without loss or duplicate, also after a lost event")
    func lastEventID() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 20))
        let created = try Self.session(fixture, list: "feed", ["limit": 10, "format": "sequential"])
        let id = created["session"] as! String
        var windows = try SeqWindows(format: "sequential", creation: created)
        let first = try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\(id)/events")
        try first.readHead()
        try Self.insert(fixture, "feed", id: "a", after: "s0-1")
        let event = try #require(first.waitForEvents(1).first)
        try windows.apply(event.object())
        first.close()
        // Written while no stream is open: the next stream starts with it.
        try Self.insert(fixture, "feed", id: "b", after: "s0-1")
        let second = try EventStreamReader(
            port: fixture.server.port, target: "/v1/sessions/\(id)/events", headers: [("Last-Event-ID", event.id!)])
        try second.readHead()
        let resumed = try #require(second.waitForEvents(1).first)
        #expect(Int(resumed.id!) == Int(event.id!)! + 1)
        #expect(try resumed.object()["fromSeq"] as? Int == Int(event.id!))
        #expect(try windows.apply(resumed.object()))
        #expect(windows.current == (try fixture.freshWindow(ofSession: id)))
        // The client lost that event: resuming from the one before answers again from there.
        second.close()
        try Self.insert(fixture, "feed", id: "c", after: "s0-1")
        let third = try EventStreamReader(
            port: fixture.server.port, target: "/v1/sessions/\(id)/events", headers: [("Last-Event-ID", event.id!)])
        try third.readHead()
        let again = try #require(third.waitForEvents(1).first)
        #expect(try again.object()["fromSeq"] as? Int == Int(event.id!))
        var lost = try SeqWindows(format: "sequential", creation: created)
        try lost.apply(event.object())
        #expect(try lost.apply(again.object()))
        #expect(lost.current == (try fixture.freshWindow(ofSession: id)))
        // Older than that: 409 before the stream starts.
        let stale = try fixture.call("GET", "/v1/sessions/\(id)/events", headers: [("Last-Event-ID", "1")])
        #expect(stale.status == 409)
        #expect(try stale.problemSlug() == "since-mismatch")
        #expect(try fixture.call("GET", "/v1/sessions/\(id)/events", headers: [("Last-Event-ID", "x")]).status == 400)
        #expect(try fixture.call("GET", "/v1/sessions/nope/events").status == 404)
    }

    @Test("heartbeats: a comment line every heartbeatInterval on an idle stream")
    func heartbeats() throws {
        let fixture = try Self.fixture { $0.events.heartbeatSeconds = 0.2 }
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 5))
        let id = try Self.session(fixture, list: "feed")["session"] as! String
        let reader = try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\(id)/events")
        try reader.readHead()
        #expect(reader.wait(seconds: 3) { $0.trailingComments.filter { $0 == "keep-alive" }.count >= 3 })
        #expect(reader.events.isEmpty)
    }

    @Test("gone when the session is deleted, when its list is deleted, when it expires")
    func gone() throws {
        let fixture = try Self.fixture { $0.sessions.idleSeconds = 0.6 }
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 5))
        try fixture.put("other", listDocument(sections: 1, items: 5))
        let deleted = try Self.session(fixture, list: "feed")["session"] as! String
        let listGone = try Self.session(fixture, list: "other")["session"] as! String
        let readers = try [deleted, listGone].map {
            try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\($0)/events")
        }
        for reader in readers { try reader.readHead() }
        #expect(try fixture.call("DELETE", "/v1/sessions/\(deleted)").status == 204)
        #expect(try fixture.call("DELETE", "/v1/lists/other").status == 204)
        for reader in readers {
            #expect(reader.waitForEnd(seconds: 3))
            #expect(reader.events.last?.event == "gone")
        }
        // Idle: no request and no event for longer than sessions.idleTimeout.
        let idle = try Self.session(fixture, list: "feed")["session"] as! String
        let reader = try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\(idle)/events")
        try reader.readHead()
        #expect(reader.waitForEnd(seconds: 5))
        #expect(reader.events.map(\.event) == ["gone"])
        // The stream leaves the count when libmicrohttpd reports the request over, just after the last byte.
        let deadline = ContinuousClock.now + .seconds(5)
        while fixture.service.context.streams.count > 0 && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(fixture.service.context.streams.count == 0)
    }

    @Test("503 overloaded past events.maxStreams; a new stream of a session ends the older one")
    func maxStreams() throws {
        let fixture = try Self.fixture { $0.events.maxStreams = 2 }
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 5))
        let ids = try (0..<3).map { _ in try Self.session(fixture, list: "feed")["session"] as! String }
        let open = try ids.prefix(2).map {
            try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\($0)/events")
        }
        for reader in open { try reader.readHead() }
        let refused = try fixture.call("GET", "/v1/sessions/\(ids[2])/events")
        #expect(refused.status == 503)
        #expect(try refused.problemSlug() == "overloaded")
        #expect(refused.headers["Retry-After"] != nil)
        // The same session again: admitted, and the older stream ends.
        let replacing = try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\(ids[0])/events")
        try replacing.readHead()
        #expect(replacing.status == 200)
        #expect(open[0].waitForEnd(seconds: 3))
        try Self.insert(fixture, "feed", id: "x", after: "s0-1")
        #expect(replacing.waitForEvents(1).count == 1)
        #expect(open[0].events.isEmpty)
    }

    @Test("an extend racing a write with a stream open: applied in seq order, the client ends exact")
    func extendRacingWrite() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 2, items: 40))
        for format in ["batch", "sequential"] {
            let created = try Self.session(fixture, list: "feed", ["limit": 10, "format": format])
            let id = created["session"] as! String
            var windows = try SeqWindows(format: format, creation: created)
            let reader = try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\(id)/events")
            try reader.readHead()
            for round in 0..<15 {
                let held = windows.latest
                let answers = Mutex<[[UInt8]]>([])
                try concurrently(2) { task in
                    if task == 0 {
                        let response = try fixture.call("GET", "/v1/sessions/\(id)/changes?seq=\(held)&extend=next")
                        if response.status == 200 { answers.withLock { $0.append(response.body) } }
                    } else {
                        try Self.insert(fixture, "feed", id: "\(format)-r\(round)", after: "s0-\(round % 5)")
                    }
                }
                usleep(50_000)
                reader.pump()
                // In seq order, each on the window of its fromSeq.
                let replies = try answers.withLock { $0 }.map { body in
                    try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
                }
                let all = (replies + (try reader.takeEvents().map { try $0.object() }))
                    .sorted { ($0["seq"] as! Int) < ($1["seq"] as! Int) }
                for answer in all { try windows.apply(answer) }
            }
            let fresh = try fixture.freshWindow(ofSession: id)
            #expect(windows.current == fresh, "\(format)")
            reader.close()
        }
    }

    @Test("a write outside the window still sends an event (no changes, the new seq and page), so seq follows")
    func writeOutsideWindow() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 20))
        let id = try Self.session(fixture, list: "feed", ["limit": 5])["session"] as! String
        let reader = try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\(id)/events?seq=1")
        try reader.readHead()
        #expect(reader.wait(seconds: 5) { $0.trailingComments.count > 0 })
        try Self.insert(fixture, "feed", id: "far", after: "s0-15")
        let events = reader.waitForEvents(1)
        try #require(events.count == 1)
        let answer = try events[0].object()
        #expect(answer["seq"] as? Int == 2 && answer["fromSeq"] as? Int == 1)
        #expect((answer["page"] as? [String: Any])?["total"] as? Int == 21)
        // The client, at seq 2, extends from there: no 409.
        #expect(try fixture.call("GET", "/v1/sessions/\(id)/changes?seq=2&extend=next").status == 200)
    }

    @Test("a long poll overtaken by the client's own extend ends empty instead of undoing the extend")
    func longPollOvertaken() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 20))
        let id = try Self.session(fixture, list: "feed", ["limit": 5])["session"] as! String
        let poll = Mutex<ClientResponse?>(nil)
        DetachedThread.start {
            let response = try? fixture.call("GET", "/v1/sessions/\(id)/changes?seq=1&wait=20")
            poll.withLock { $0 = response }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while fixture.service.context.longPolls.count < 1 && ContinuousClock.now < deadline { usleep(5_000) }
        try #require(fixture.service.context.longPolls.count == 1)
        let extended = try fixture.call("GET", "/v1/sessions/\(id)/changes?seq=1&extend=next")
        #expect(try extended.object()["seq"] as? Int == 2)
        try Self.insert(fixture, "feed", id: "top", after: nil)
        while poll.withLock({ $0 }) == nil && ContinuousClock.now < deadline { usleep(5_000) }
        let answer = try #require(poll.withLock { $0 }).object()
        #expect(answer["seq"] as? Int == 1 && answer["fromSeq"] as? Int == 1)
        // The session still holds the extended window (10 items, plus the insert when it falls inside).
        let session = try #require(fixture.service.context.sessions.session(id))
        #expect(session.seq == 2)
        #expect(session.current.window.itemIDs.count == 10)
    }

    @Test("2,000 streams on one list, one write: every stream delivers within 1 s")
    func fanOut() throws {
        let fixture = try Self.fixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 100))
        let count = 2_000
        var readers: [EventStreamReader] = []
        for _ in 0..<count {
            let id = try Self.session(fixture, list: "feed", ["limit": 20])["session"] as! String
            readers.append(try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\(id)/events"))
        }
        #expect(EventStreamReader.waitAll(readers, seconds: 30) { $0.trailingComments.count > 0 })
        #expect(fixture.service.context.streams.count == count)
        // Up to five writes, each delivered to every stream; the fastest must take under 1 s. (The suites
        // run in parallel on two cores: one round may lose the CPU to another test, five rarely all do.)
        let clock = ContinuousClock()
        var fastest = Duration.seconds(3600)
        for round in 1...5 where fastest >= .seconds(1) {
            let start = clock.now
            try Self.insert(fixture, "feed", id: "fresh-\(round)", after: "s0-3")
            let delivered = EventStreamReader.waitAll(readers, seconds: 10) { $0.events.count >= round }
            fastest = min(fastest, clock.now - start)
            try #require(delivered, "round \(round): not every stream delivered")
            for reader in readers.prefix(10) {
                #expect(try reader.events[round - 1].object()["seq"] as? Int == round + 1)
            }
        }
        #expect(fastest < .seconds(1), "all \(count) streams delivered in \(fastest) at best")
    }

    @Test("a store at its capacity of 4,096 sessions keeps every one: a burst of their streams gets no 404")
    func burstAtCapacity() throws {
        // From 4,096 sessions up the store is 16 stripes, a session's by its id's random bits, which fill them
        // unevenly. Each stripe was capped at its sixteenth of the capacity, so a store short of its capacity
        // evicted the stalest sessions of a fuller stripe, and their streams were refused (404 session-not-found):
        // `scripts/bench.py streams` lost a few of 10,000 in about one run of twelve (capacity 11,000). At the
        // capacity itself some stripe always holds more than its sixteenth: dozens were lost here.
        let capacity = 4096
        let fixture = try Self.fixture { $0.sessions.capacity = capacity }
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 5))
        let connection = try fixture.server.connect(timeoutSeconds: 60)
        var ids: [String] = []
        for _ in 0..<capacity {
            let created = try connection.request(
                "POST", "/v1/lists/feed/sessions", headers: [("Content-Type", "application/json")],
                body: Array(#"{"limit":1}"#.utf8))
            try #require(created.status == 201, "\(created.text)")
            ids.append(try #require(try created.object()["session"] as? String))
        }
        #expect(fixture.service.context.sessions.evictionCount == 0)
        // Every session's stream, in bursts of 512 connections opened at once.
        var refused: [Int: Int] = [:]
        for start in stride(from: 0, to: ids.count, by: 512) {
            let readers = try ids[start..<min(start + 512, ids.count)].map {
                try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\($0)/events")
            }
            // Long: with the suite's other tests on both cores, a burst's connections wait in the listen queue,
            // and a connection the queue dropped is retried by the kernel after 1, 3, 7, 15, 31 s.
            #expect(EventStreamReader.waitAll(readers, seconds: 120) { $0.status != 0 || $0.isClosed })
            for reader in readers where reader.status != 200 { refused[reader.status, default: 0] += 1 }
            for reader in readers { reader.close() }
        }
        #expect(refused.isEmpty, "streams refused, by status (0: closed before a head): \(refused)")
    }

    @Test("shutdown with open streams ends them cleanly within the drain timeout, each with event: gone")
    func shutdownWithStreams() throws {
        let fixture = try Self.fixture { $0.http.drainTimeoutSeconds = 2 }
        try fixture.put("feed", listDocument(sections: 1, items: 5))
        var readers: [EventStreamReader] = []
        for _ in 0..<20 {
            let id = try Self.session(fixture, list: "feed")["session"] as! String
            readers.append(try EventStreamReader(port: fixture.server.port, target: "/v1/sessions/\(id)/events"))
        }
        #expect(EventStreamReader.waitAll(readers, seconds: 10) { $0.trailingComments.count > 0 })
        let clock = ContinuousClock()
        let start = clock.now
        fixture.stop()
        #expect(clock.now - start < .milliseconds(2_500))
        #expect(EventStreamReader.waitAll(readers, seconds: 3) { $0.waitForEnd(seconds: 0) })
        for reader in readers { #expect(reader.events.last?.event == "gone", "the session ended with the service") }
    }

    @Test("quire serve with open streams exits 0 on SIGTERM within the drain timeout")
    func processShutdownWithStreams() throws {
        let child = try QuireProcess(
            ["serve", "--port", "0", "--log-format", "json", "--threads", "2"],
            environment: ["QUIRE_STORAGE_PATH": ":memory:", "QUIRE_SERVER_DRAIN_TIMEOUT": "3"])
        let port = try child.waitForPort()
        try child.waitUntilReady(port: port)
        var readers: [EventStreamReader] = []
        for _ in 0..<10 {
            let created = try HTTPClientConnection(host: "127.0.0.1", port: port).request(
                "POST", "/v1/lists/demo/sessions", headers: [("Content-Type", "application/json")],
                body: Array("{}".utf8))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any])
            let id = try #require(object["session"] as? String)
            readers.append(try EventStreamReader(port: port, target: "/v1/sessions/\(id)/events"))
        }
        #expect(EventStreamReader.waitAll(readers, seconds: 10) { $0.trailingComments.count > 0 })
        let clock = ContinuousClock()
        let start = clock.now
        kill(child.pid, SIGTERM)
        #expect(child.waitForExit(seconds: 10) == 0)
        #expect(clock.now - start < .seconds(3))
        #expect(EventStreamReader.waitAll(readers, seconds: 1) { $0.waitForEnd(seconds: 0) })
    }
}
