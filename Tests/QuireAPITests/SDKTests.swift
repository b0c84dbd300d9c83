import AsyncHTTPClient
import Foundation
import OpenAPIAsyncHTTPClient
import QuireClient
import QuireCore
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

@testable import QuireAPI
@testable import QuireAuth

/// The Swift SDK (QuireClient's QuireSession) against a real server on port 0: the whole session loop.
@Suite("Swift SDK", .serialized, .timeLimit(.minutes(3)))
struct SDKTests {
    /// The default client: the generated client on URLSessionTransport, which on Linux buffers response
    /// bodies, so its sessions follow writes with long polls.
    static func client(_ fixture: APIFixture) -> QuireClient {
        client(port: fixture.server.port, transport: .longPolls)
    }

    /// A client for `transport`: `.events` on AsyncHTTPClientTransport (it streams on Linux), else the default.
    static func client(port: Int, transport: QuireSession.Options.Transport) -> QuireClient {
        let url = URL(string: "http://127.0.0.1:\(port)")!
        guard transport == .events else { return QuireClient(baseURL: url) }
        return QuireClient(baseURL: url, transport: AsyncHTTPClientTransport(), streamsResponses: true)
    }

    /// Waits until the server has moved the session to its list's current version (a write is answered
    /// to it: the server's seq moves only then) and the SDK holds that answer. A filtered session's target is
    /// its view's current version: a write that leaves the view as it was moves neither the view nor the
    /// session.
    static func converge(_ session: QuireSession, _ fixture: APIFixture, seconds: Double = 20) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        let filter = try session.options.filter.map { try ListFilter(text: $0.json) }
        // The session's list by its name: a filtered session's stored `list` names its view.
        func current() -> UInt64? {
            guard let parent = fixture.service.registry.version(of: session.list) else { return nil }
            guard let filter else { return parent.version }
            return fixture.service.context.views.version(of: session.list, filter: filter, parent: parent).version
        }
        while ContinuousClock.now < deadline {
            if let id = await session.sessionID, let stored = fixture.service.context.sessions.session(id),
                stored.current.version.version == current(),
                await session.seq == Int(stored.seq)
            {
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let stored = await session.sessionID.flatMap { fixture.service.context.sessions.session($0) }
        let seq = await session.seq
        let statistics = await session.statistics
        let versions = (stored?.current.version.version ?? 0, current() ?? 0)
        Issue.record(
            Comment(
                rawValue: "the SDK did not catch up: seq \(seq), the server's \(stored?.seq ?? 0); the session's "
                    + "version \(versions.0), the target \(versions.1); \(statistics)"))
    }

    /// ``produce(_:_:stop:seed:)`` on a thread of its own: its blocking calls on a task would hold one of the
    /// cooperative pool's threads (two on a two-core machine) until `stop`, and two of them would leave no thread to
    /// the tasks that set it.
    static func producing(_ fixture: APIFixture, _ list: String, stop: StopFlag, seed: UInt64)
        -> DetachedThread.Joinable
    {
        DetachedThread.startJoinable { produce(fixture, list, stop: stop, seed: seed) }
    }

    /// Random writes on a list of `s0-*` items until `stop`.
    static func produce(_ fixture: APIFixture, _ list: String, stop: StopFlag, seed: UInt64) {
        var random = SeededRandom(seed)
        var next = 0
        while !stop.isSet {
            let ids = fixture.listIDs(list)
            guard ids.count > 10 else { return }
            let pick = { ids[Int(random.next() % UInt64(ids.count))] }
            let op: [String: Any]
            switch random.next() % 4 {
            case 0:
                next += 1
                op = [
                    "op": "insertItems", "section": "sec-0", "after": pick(),
                    "items": [["id": "w-\(seed)-\(next)", "type": "row", "data": ["n": next]]],
                ]
            case 1: op = ["op": "removeItems", "ids": [pick()]]
            case 2: op = ["op": "updateItems", "items": [["id": pick(), "type": "row", "data": ["edited": next]]]]
            default: op = ["op": "moveItem", "id": pick(), "section": "sec-0", "after": pick()]
            }
            _ = try? fixture.call("POST", "/v1/lists/\(list)/ops", json: ["ops": [op]])
            usleep(15_000)
        }
    }

    @Test(
        "scrolling a 5,000-item list while a producer writes: the SDK's window equals a fresh read",
        arguments: [
            (QuireSession.Options.Format.batch, QuireSession.Options.Transport.events),
            (.batch, .longPolls), (.sequential, .events), (.sequential, .longPolls),
        ])
    func scrollWhileWriting(format: QuireSession.Options.Format, transport: QuireSession.Options.Transport) async throws
    {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        try fixture.put("big", listDocument(sections: 1, items: 5_000))
        let session = Self.client(port: fixture.server.port, transport: transport).session(
            list: "big",
            options: QuireSession.Options(limit: 250, format: format, transport: transport, longPollWait: 5))
        let view = FakeCollectionView()
        let applied = Task { @MainActor in
            for await update in session.updates {
                BatchUpdater().apply(update, to: view) { view.window = $0 }
            }
        }
        try await session.open()
        let stop = StopFlag()
        let producer = Self.producing(fixture, "big", stop: stop, seed: 7)
        var pages = 0
        while await session.hasNext && pages < 40 {
            try await session.loadNext()
            pages += 1
        }
        stop.set()
        producer.join()
        // Writes after the window reached the end may have put items past it: catch up, scroll on to the end.
        try await Self.converge(session, fixture)
        while await session.hasNext && pages < 80 {
            try await session.loadNext()
            pages += 1
        }
        try await Self.converge(session, fixture)
        let id = try #require(await session.sessionID)
        #expect(await session.window == (try fixture.freshWindow(ofSession: id)))
        #expect(await session.hasNext == false)
        #expect(await session.window.itemIDs == fixture.listIDs("big"))
        let statistics = await session.statistics
        #expect(statistics.sessionsOpened == 1)
        if transport == .events {
            #expect(statistics.events > 0 && statistics.longPolls == 0)
        } else {
            #expect(statistics.longPolls > 0 && statistics.streams == 0)
        }
        let shown = await session.window
        await session.close()
        await applied.value
        await MainActor.run {
            #expect(view.violations.isEmpty, "\(view.violations.prefix(3))")
            if format == .batch { #expect(view.batches > 0) }
            #expect(view.window == shown)
        }
    }

    /// The items of `list` that `matches` keeps, read from the core and filtered here: the test's oracle.
    static func matchingIDs(_ fixture: APIFixture, _ list: String, _ matches: (ClientJSON) -> Bool) throws
        -> [String]
    {
        guard let version = fixture.service.registry.version(of: list) else { return [] }
        var bytes: [UInt8] = []
        version.window(range: 0..<version.visibleCount()).encodeSections(into: &bytes)
        let whole = try ClientWindow(pageSections: Data(bytes))
        return whole.sections.flatMap(\.items).filter(matches).compactMap { $0["id"]?.stringValue }
    }

    @Test(
        "a filtered session (QuireFilter): only matching items, exact while writes move items into and out of it",
        arguments: [
            (QuireSession.Options.Format.batch, QuireSession.Options.Transport.events), (.sequential, .longPolls),
        ])
    func filtered(format: QuireSession.Options.Format, transport: QuireSession.Options.Transport) async throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        try fixture.put("mail", listDocument(sections: 1, items: 600))
        // The first 50 rows, and every row the producer edits (its updates write {"edited": n}, its inserts
        // {"n": small n}): writes move rows into the filter and out of it.
        let filter = QuireFilter.field("data.n").lt(50) || QuireFilter.data("edited").exists()
        func matches(_ item: ClientJSON) -> Bool {
            if case .number(let n) = item["data"]?["n"], n < 50 { return true }
            return item["data"]?["edited"] != nil
        }
        let session = Self.client(port: fixture.server.port, transport: transport).session(
            list: "mail",
            options: QuireSession.Options(
                limit: 20, format: format, filter: filter, transport: transport, longPollWait: 5))
        let view = FakeCollectionView()
        let applied = Task { @MainActor in
            for await update in session.updates {
                BatchUpdater().apply(update, to: view) { view.window = $0 }
            }
        }
        try await session.open()
        #expect(await session.window.itemIDs == (0..<20).map { "s0-\($0)" })
        #expect(await session.hasNext)
        let stop = StopFlag()
        let producer = Self.producing(fixture, "mail", stop: stop, seed: 11)
        // Two seconds of writes, the window extended whenever more matching items exist.
        var pages = 0
        let writing = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < writing {
            if await session.hasNext {
                try await session.loadNext()
                pages += 1
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        stop.set()
        producer.join()
        try await Self.converge(session, fixture)
        while await session.hasNext && pages < 60 {
            try await session.loadNext()
            pages += 1
        }
        try await Self.converge(session, fixture)
        let expected = try Self.matchingIDs(fixture, "mail", matches)
        #expect(expected.count > 70, "the producer's edits and inserts entered the filter")
        #expect(await session.window.itemIDs == expected)
        #expect(await session.hasNext == false)
        let id = try #require(await session.sessionID)
        #expect(await session.window == (try fixture.freshWindow(ofSession: id)))
        #expect(await session.statistics.sessionsOpened == 1)
        let shown = await session.window
        await session.close()
        await applied.value
        await MainActor.run {
            #expect(view.violations.isEmpty, "\(view.violations.prefix(3))")
            #expect(view.window == shown)
        }
    }

    @Test("a filter the server refuses reaches open() as 400 invalid-filter")
    func refusedFilter() async throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        try fixture.put("mail", listDocument(sections: 1, items: 10))
        let tooMany = QuireFilter.any((0..<33).map { QuireFilter.field("data.n").eq(.number(Double($0))) })
        let session = Self.client(fixture).session(list: "mail", options: .init(filter: tooMany))
        do {
            try await session.open()
            Issue.record("open() succeeded with 33 terms")
        } catch let error as QuireClientError {
            #expect(error.status == 400 && error.problem == "invalid-filter", "\(error)")
        }
        await session.close()
    }

    @Test(
        "a server restart (sessions lost) recovers through 404 with one new session around the first item",
        arguments: [QuireSession.Options.Transport.events, .longPolls])
    func restart(transport: QuireSession.Options.Transport) async throws {
        let first = try APIFixture()
        try first.put("feed", listDocument(sections: 1, items: 100))
        let port = first.server.port
        let client = Self.client(port: port, transport: transport)
        let session = client.session(
            list: "feed", options: QuireSession.Options(limit: 20, transport: transport, maxBackoff: 0.5))
        try await session.open()
        try await session.loadNext()
        await session.setVisibleItem("s0-10")
        first.stop()
        let second = try APIFixture { $0.http.port = port }
        defer { second.stop() }
        try second.put("feed", listDocument(sections: 1, items: 100))
        // The stream was cut: the SDK reconnects, gets 404, opens a new session around s0-10.
        try await Self.expectRecovered(session, on: second, around: "s0-10", thenRemoving: "s0-11")
        await session.close()
    }

    /// Waits for the session lost with its server to be opened again on `server` (one new session, around
    /// `item`), then checks that it follows writes there.
    static func expectRecovered(
        _ session: QuireSession, on server: APIFixture, around item: String, thenRemoving removed: String
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while await session.statistics.sessionsOpened < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(300))  // a second replacement would be opened by now
        #expect(await session.statistics.sessionsOpened == 2)
        #expect(await session.window.itemIDs.contains(item))
        try server.ops("feed", [["op": "removeItems", "ids": [removed]]])
        try await converge(session, server)
        let id = try #require(await session.sessionID)
        #expect(await session.window == (try server.freshWindow(ofSession: id)))
    }

    @Test(
        "a lost session whose replacement cannot open at once (its list not loaded yet) is opened when it can",
        arguments: [QuireSession.Options.Transport.events, .longPolls])
    func restartBeforeTheListIsBack(transport: QuireSession.Options.Transport) async throws {
        let first = try APIFixture()
        try first.put("feed", listDocument(sections: 1, items: 100))
        let port = first.server.port
        let session = Self.client(port: port, transport: transport).session(
            list: "feed", options: QuireSession.Options(limit: 20, transport: transport, maxBackoff: 0.3))
        try await session.open()
        await session.setVisibleItem("s0-5")
        first.stop()
        let second = try APIFixture { $0.http.port = port }
        defer { second.stop() }
        // The SDK finds its session gone and asks for a new one on a server that has no `feed` yet (404
        // list-not-found): it must not give up, nor open more than one session once the list is back.
        // Two refusals: the SDK tried again after its first attempt failed.
        let refusedCreate = #"quire_http_requests_total{method="POST",route="/v1/lists/{list}/sessions",status="404"} "#
        func refusals() throws -> Int {
            let text = try second.call("GET", "/metrics").text
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(refusedCreate) }) else { return 0 }
            return Int(line.dropFirst(refusedCreate.count)) ?? 0
        }
        let refused = ContinuousClock.now + .seconds(20)
        while try refusals() < 2 && ContinuousClock.now < refused {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try refusals() >= 2)
        #expect(await session.statistics.sessionsOpened == 1)
        try second.put("feed", listDocument(sections: 1, items: 100))
        try await Self.expectRecovered(session, on: second, around: "s0-5", thenRemoving: "s0-6")
        await session.close()
    }

    @Test("the app's calls made at once are sent one at a time: pages loaded together are all kept")
    func callsAtOnce() async throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 100))
        // On the event stream: the app's calls are the only requests that move the session (with long polls,
        // a poll already on its way when a call is answered can still name the window before it; see the
        // follower).
        let session = Self.client(port: fixture.server.port, transport: .events).session(
            list: "feed", options: QuireSession.Options(limit: 20, transport: .events))
        try await session.open()
        // Sent together, both would name the first page's window, and the server would answer the second from
        // it (a retry, for the server): the first page loaded would be undone.
        async let first: Void = session.loadNext()
        async let second: Void = session.loadNext()
        async let third: Void = session.loadNext()
        _ = try await (first, second, third)
        let count = await session.window.itemIDs.count
        let statistics = await session.statistics
        #expect(count == 80, "\(count) items, \(statistics)")
        let id = try #require(await session.sessionID)
        #expect(await session.window == (try fixture.freshWindow(ofSession: id)))
        #expect(await session.statistics.resets == 0)
        await session.close()
    }

    @Test("a forced 409 recovers by reset")
    func sinceMismatch() async throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 100))
        // Long polls: the SDK's poll is parked (its answer computed, empty) before the session is moved, and
        // nothing is written, so nothing but these requests moves the session.
        let session = Self.client(fixture).session(
            list: "feed", options: QuireSession.Options(limit: 10, transport: .longPolls, longPollWait: 30))
        try await session.open()
        let id = try #require(await session.sessionID)
        let deadline = ContinuousClock.now + .seconds(20)
        while fixture.service.context.longPolls.count < 1 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(fixture.service.context.longPolls.count == 1)
        // Someone else moves the session twice: the SDK's seq is neither the current one nor the one before.
        for seq in 1...2 {
            let response = try fixture.call("GET", "/v1/sessions/\(id)/changes?seq=\(seq)&extend=next")
            #expect(response.status == 200, "\(response.text)")
        }
        let behind = await session.seq
        try await session.loadNext()
        #expect(await session.statistics.resets == 1)
        #expect(await session.seq > behind + 2, "the reset and the extend after it")
        try await Self.converge(session, fixture)
        #expect(await session.window == (try fixture.freshWindow(ofSession: id)))
        await session.close()
    }

    @Test("503 with Retry-After is honoured")
    func retryAfter() async throws {
        let fixture = try APIFixture { $0.events.maxStreams = 0 }
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 10))
        let session = Self.client(port: fixture.server.port, transport: .events).session(
            list: "feed", options: QuireSession.Options(transport: .events, maxBackoff: 0.05))
        try await session.open()
        try await Task.sleep(for: .milliseconds(2_500))
        let metrics = try fixture.call("GET", "/metrics").text
        let refused = metrics.split(separator: "\n").first {
            $0.hasPrefix("quire_http_requests_total") && $0.contains("events") && $0.contains("503")
        }
        let count = Int(refused?.split(separator: " ").last ?? "0") ?? 0
        // Retry-After: 1 → at most one attempt a second (a backoff of 0.05 s alone would make ~50).
        #expect((2...3).contains(count), "\(count) attempts in 2.5 s")
        #expect(await session.statistics.retryAfterWaits >= 2)
        await session.close()
    }

    @Test("typed items: data decodes into the app's own types")
    func typedItems() async throws {
        struct Row: Decodable, Sendable { let n: Int }
        let fixture = try APIFixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 5))
        let session = Self.client(fixture).session(list: "feed")
        try await session.open()
        let window = await session.window
        let item = try window.item(at: ItemPath(section: 0, item: 3), as: Row.self)
        #expect(item.id == "s0-3" && item.type == "row" && item.data.n == 3)
        #expect(window.items(as: Row.self)[0].map(\.data.n) == [0, 1, 2, 3, 4])
        await session.close()
    }
}

/// The test double itself: what UIKit raises `NSInternalInconsistencyException` for, it records.
@Suite("Fake collection view")
@MainActor
struct FakeCollectionViewTests {
    static func window(_ ids: [String]) -> ClientWindow {
        ClientWindow(sections: [
            ClientSection(id: "a", items: ids.map { .object(["id": .string($0), "type": .string("row")]) })
        ])
    }

    static func view(showing ids: [String]) -> FakeCollectionView {
        let view = FakeCollectionView()
        let window = window(ids)
        BatchUpdater().apply(
            SessionUpdate(change: .reset(window), window: window, seq: 1, hasPrev: false, hasNext: false), to: view
        ) {
            view.window = $0
        }
        return view
    }

    static func apply(_ batch: BatchChanges, showing ids: [String], to view: FakeCollectionView) {
        BatchUpdater().apply(
            SessionUpdate(change: .changes(batch), window: window(ids), seq: 2, hasPrev: false, hasNext: false),
            to: view
        ) { view.window = $0 }
    }

    @Test("a consistent batch passes; counts that do not add up and cells that differ are caught")
    func rules() {
        let good = Self.view(showing: ["1", "2", "3"])
        Self.apply(BatchChanges(deleteItems: [[0, 1]], counts: [2]), showing: ["1", "3"], to: good)
        #expect(good.violations.isEmpty)
        #expect(good.batches == 1)

        let forgotDelete = Self.view(showing: ["1", "2", "3"])
        Self.apply(BatchChanges(counts: [2]), showing: ["1", "3"], to: forgotDelete)
        #expect(forgotDelete.violations.first?.hasPrefix("section 0→0: 2 items after, 3 before") == true)

        let wrongRow = Self.view(showing: ["1", "2", "3"])
        Self.apply(BatchChanges(deleteItems: [[0, 0]], counts: [2]), showing: ["1", "3"], to: wrongRow)
        #expect(wrongRow.violations == ["the cells rebuilt from the batch are not the data source's window"])

        let outside = Self.view(showing: ["1"])
        Self.apply(
            BatchChanges(insertItems: [.init(at: [0, 5], item: .null)], counts: [2]), showing: ["1", "2"], to: outside)
        #expect(outside.violations.contains { $0.hasPrefix("insert at") })
    }
}

/// A flag one thread sets and another reads.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}

/// A small deterministic generator (SplitMix64).
struct SeededRandom {
    private var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
