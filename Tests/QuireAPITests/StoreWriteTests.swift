import Dispatch
import Foundation
import QuireCore
import QuireHTTP
import QuireStore
import QuireTesting
import Synchronization
import Testing

@testable import QuireAPI

/// A store whose commits of the lists named `slow…`, and listings of the prefix `slow`, wait until released (one
/// signal each): a database that stopped answering.
private final class GatedStore: ListStoreDecorator {
    let base: any ListStore = InMemoryListStore()
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)

    func summaries(of selection: ListSelection, after: String?, limit: Int) throws -> [ListSummary]? {
        if selection.prefixes == ["slow"] {
            entered.signal()
            release.wait()
        }
        return try base.summaries(of: selection, after: after, limit: limit)
    }

    func commit(list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?)
        throws -> Int64?
    {
        if list.hasPrefix("slow") {
            entered.signal()
            release.wait()
        }
        return try base.commit(list: list, previous: previous, at: position, next: next, write: write)
    }
}

/// A store whose next commit fails with the error set (a disk that filled, a database that stopped answering
/// while committing), then works again.
private final class FailingStore: ListStoreDecorator {
    let base: any ListStore = InMemoryListStore()
    let failure = Mutex<(any Error)?>(nil)

    func commit(list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?)
        throws -> Int64?
    {
        if let error = failure.withLock({ $0.take() }) { throw error }
        return try base.commit(list: list, previous: previous, at: position, next: next, write: write)
    }
}

/// A SQLite file whose batches (`commit(together:)`) are recorded, and whose batches holding a list named `slow…`
/// wait until released: a sync that takes its time.
private final class GatedBatchStore: ListStoreDecorator {
    let base: any ListStore
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let batches = Mutex<[[String]]>([])

    init(path: String) throws {
        base = try SQLiteListStore(path: path)
    }

    var syncsLocally: Bool { true }
    var commitsTogether: Bool { true }

    func commit(together commits: [ListCommit]) throws {
        batches.withLock { $0.append(commits.map(\.list)) }
        if commits.contains(where: { $0.list.hasPrefix("slow") }) {
            entered.signal()
            release.wait()
        }
        try base.commit(together: commits)
    }
}

private struct DiskFull: Error {}

@Suite("Store writes off the server's threads")
struct StoreWriteTests {
    /// A service on `store`, without the demo list, started, and a client of it.
    private static func serve(
        _ store: any ListStore, configure: (inout QuireService.Configuration) -> Void = { _ in }
    ) throws -> (QuireService, TestServer) {
        var configuration = QuireService.Configuration.testing
        configuration.demo.seed = false
        configure(&configuration)
        let service = QuireService(configuration: configuration, logger: TestServer.logger, store: store)
        try service.startAndLoad()
        return (service, try TestServer(running: service.server))
    }

    @Test(
        "a write the store refused answers 503 with written: no; one whose commit went unanswered, written: unknown"
    )
    func writtenMember() throws {
        let store = FailingStore()
        let (service, server) = try Self.serve(store)
        defer { service.shutdown() }
        func put(_ items: String) throws -> ClientResponse {
            try server.connect(timeoutSeconds: 30).request(
                "PUT", "/v1/lists/l", headers: [("Content-Type", "application/json")],
                body: Array(#"{"sections":[{"id":"s","items":[\#(items)]}]}"#.utf8))
        }
        #expect(try put("").status == 201)
        for (failure, written) in [
            (DiskFull() as any Error, "no"), (StoreOutcomeUnknown("no answer to COMMIT"), "unknown"),
        ] {
            store.failure.withLock { $0 = failure }
            let refused = try put(#"{"id":"a","type":"t"}"#)
            #expect(refused.status == 503)
            #expect(try refused.problemSlug() == "overloaded")
            #expect(try refused.object()["written"] as? String == written)
            #expect(refused.headers["Retry-After"] == "1")
            #expect(service.registry.version(of: "l")?.version == 1, "a refused write changed the list")
        }
        #expect(try put(#"{"id":"a","type":"t"}"#).status == 200)
        #expect(service.registry.version(of: "l")?.version == 2)
    }

    @Test(
        "stores whose calls never wait say so, and their writes are made at once; a decorator may wait, unless it only times"
    )
    func storesThatAnswerAtOnce() throws {
        #expect(InMemoryListStore().answersAtOnce)
        #expect(try SQLiteListStore(path: SQLiteListStore.inMemoryPath).answersAtOnce)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quire-at-once-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try !SQLiteListStore(path: folder.appendingPathComponent("quire.sqlite").path).answersAtOnce)
        #expect(!GatedStore().answersAtOnce)

        // The service's registry sees the store through its timing decorator: writes are made at once, and answered
        // as on a lane (status, ETag, body, no-store).
        let (service, server) = try Self.serve(InMemoryListStore())
        defer { service.shutdown() }
        #expect(service.registry.storeAnswersAtOnce)
        let connection = try server.connect(timeoutSeconds: 30)
        let created = try connection.request(
            "PUT", "/v1/lists/l", headers: [("Content-Type", "application/json")],
            body: Array(#"{"sections":[{"id":"s","items":[]}]}"#.utf8))
        #expect(created.status == 201)
        let written = try connection.request(
            "POST", "/v1/lists/l/ops", headers: [("Content-Type", "application/json")],
            body: Array(#"{"ops":[{"op":"insertItems","section":"s","items":[{"id":"a","type":"t"}]}]}"#.utf8))
        #expect(written.status == 200)
        #expect(written.headers["ETag"] == "\"2\"")
        #expect(written.headers["Cache-Control"] == "no-store")
        #expect(try written.object()["version"] as? Int == 2)
    }

    @Test("a write waiting on its store holds up no other connection, and answers with its outcome")
    func slowStoreHoldsUpNoOneElse() throws {
        let store = GatedStore()
        let (service, server) = try Self.serve(store)
        defer { service.shutdown() }
        var released = false
        defer { if !released { store.release.signal() } }  // first: a failed check must not leave the write waiting

        let written = Mutex<Int?>(nil)
        let writer = Thread {
            let connection = try? server.connect(timeoutSeconds: 60)
            let answer = try? connection?.request(
                "PUT", "/v1/lists/slow", headers: [("Content-Type", "application/json")],
                body: Array(#"{"sections":[{"id":"s","items":[]}]}"#.utf8))
            written.withLock { $0 = answer?.status }
        }
        writer.start()
        #expect(store.entered.wait(timeout: .now() + 30) == .success, "the write never reached the store")

        // Every connection is served while the write waits, whichever of the server's threads it is given
        // (each thread holds several of them). The write waits until released below, so an answer that waited
        // for it would never come; no clock is read, as a loaded machine can stall any request for seconds.
        for index in 0..<12 {
            let answer = try? server.connect(timeoutSeconds: 30).request("GET", "/healthz")
            #expect(answer?.status == 200, "connection \(index) was not answered while the write waited")
        }
        let other = try? server.connect(timeoutSeconds: 30).request(
            "PUT", "/v1/lists/other", headers: [("Content-Type", "application/json")],
            body: Array(#"{"sections":[]}"#.utf8))
        #expect(other?.status == 201)
        #expect(written.withLock { $0 } == nil)

        store.release.signal()
        released = true
        let deadline = ContinuousClock.now + .seconds(30)
        while written.withLock({ $0 }) == nil && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(written.withLock { $0 } == 201)
        #expect(service.registry.version(of: "slow") != nil)
        let metrics = try server.connect().request("GET", "/metrics").text
        #expect(metrics.contains(#"quire_http_requests_total{method="PUT",route="/v1/lists/{list}",status="201"} 2"#))
    }

    @Test("a listing waiting on its store holds up no other connection, and answers with its page and cache fields")
    func slowListingHoldsUpNoOneElse() throws {
        let store = GatedStore()
        let (service, server) = try Self.serve(store)
        defer { service.shutdown() }
        var released = false
        defer { if !released { store.release.signal() } }
        let json = [("Content-Type", "application/json")]
        for list in ["slow-1", "fast-1"] {
            // The write of slow-1 waits in the store: let it through. Only that one: a release given for fast-1,
            // which waits on nothing, could be given after the drain below and let the listing through early.
            if list == "slow-1" { Thread { store.release.signal() }.start() }
            #expect(
                try server.connect().request(
                    "PUT", "/v1/lists/\(list)", headers: json, body: Array(#"{"sections":[]}"#.utf8)
                )
                .status == 201)
        }
        while store.entered.wait(timeout: .now()) == .success {}
        while store.release.wait(timeout: .now()) == .success {}

        let listed = Mutex<ClientResponse?>(nil)
        Thread {
            let answer = try? server.connect(timeoutSeconds: 60).request("GET", "/v1/lists?prefix=slow")
            listed.withLock { $0 = answer }
        }.start()
        #expect(store.entered.wait(timeout: .now() + 30) == .success, "the listing never reached the store")
        for index in 0..<12 {
            let answer = try? server.connect(timeoutSeconds: 30).request("GET", "/healthz")
            #expect(answer?.status == 200, "connection \(index) was not answered while the listing waited")
        }
        let other = try? server.connect(timeoutSeconds: 30).request("GET", "/v1/lists?prefix=fast")
        #expect(
            other?.text
                == #"{"lists":[{"list":"fast-1","version":1,"sections":0,"items":0}],"page":{"hasNext":false,"next":null}}"#
        )
        #expect(listed.withLock { $0 } == nil)

        store.release.signal()
        released = true
        let deadline = ContinuousClock.now + .seconds(30)
        while listed.withLock({ $0 }) == nil && ContinuousClock.now < deadline { usleep(10_000) }
        let answer = try #require(listed.withLock { $0 })
        #expect(answer.status == 200)
        #expect(answer.text.contains(#"{"list":"slow-1","version":1,"sections":0,"items":0}"#))
        #expect(answer.headers["Cache-Control"] == "no-cache")
        #expect(answer.headers["ETag"]?.hasPrefix(#""h-"#) == true)
    }

    @Test("writes held in the store, more than the machine has cores, hold up no write of a list on another lane")
    func stuckCommitsHoldOnlyTheirLanes() throws {
        let store = GatedStore()
        let (service, server) = try Self.serve(store)
        defer { service.shutdown() }
        // Six lists on six lanes, and one more on a seventh: on one concurrent queue, libdispatch ran two or three
        // of the six at once (a thread per core) and the seventh list's write waited for them.
        var lanes = Set<Int>()
        var held: [String] = []
        for index in 0..<200 where held.count < 6 && lanes.insert(WriteScheduler.lane(of: "slow-\(index)")).inserted {
            held.append("slow-\(index)")
        }
        let free = try #require((0..<200).map { "free-\($0)" }.first { !lanes.contains(WriteScheduler.lane(of: $0)) })
        #expect(held.count == 6)
        var released = 0
        defer { for _ in released..<held.count { store.release.signal() } }

        let statuses = Mutex<[String: Int]>([:])
        let writers = held.map { list in
            Thread {
                let answer = try? server.connect(timeoutSeconds: 60).request(
                    "PUT", "/v1/lists/\(list)", headers: [("Content-Type", "application/json")],
                    body: Array(#"{"sections":[]}"#.utf8))
                statuses.withLock { $0[list] = answer?.status ?? 0 }
            }
        }
        for writer in writers { writer.start() }
        for index in held.indices {
            #expect(store.entered.wait(timeout: .now() + 30) == .success, "write \(index) never reached the store")
        }

        let other = try? server.connect(timeoutSeconds: 30).request(
            "PUT", "/v1/lists/\(free)", headers: [("Content-Type", "application/json")],
            body: Array(#"{"sections":[]}"#.utf8))
        #expect(other?.status == 201, "a write of another lane waited for the stuck ones")
        #expect(statuses.withLock { $0.isEmpty })

        for _ in held { store.release.signal() }
        released = held.count
        let deadline = ContinuousClock.now + .seconds(30)
        while statuses.withLock({ $0.count }) < held.count && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(statuses.withLock { $0 } == Dictionary(uniqueKeysWithValues: held.map { ($0, 201) }))
    }

    @Test("If-Match: * is checked when the write is made: another write landing first does not make it 412")
    func ifMatchAnyUnderTheLock() throws {
        let store = GatedStore()
        let (service, server) = try Self.serve(store)
        defer { service.shutdown() }
        var released = false
        defer { if !released { store.release.signal() } }
        let json = [("Content-Type", "application/json")]
        // The first write of `slow` waits in the store, holding the list's lock; it is released at once.
        Thread { store.release.signal() }.start()
        #expect(
            try server.connect().request("PUT", "/v1/lists/slow", headers: json, body: Array(#"{"sections":[]}"#.utf8))
                .status == 201)
        _ = store.entered.wait(timeout: .now() + 5)

        let first = Mutex<Int?>(nil)
        Thread {
            let answer = try? server.connect(timeoutSeconds: 60).request(
                "PUT", "/v1/lists/slow", headers: json, body: Array(#"{"sections":[{"id":"a","items":[]}]}"#.utf8))
            first.withLock { $0 = answer?.status }
        }.start()
        #expect(store.entered.wait(timeout: .now() + 30) == .success, "the first write never reached the store")
        // Version 1 is current while the second write arrives; version 2 is when it is made.
        let second = Mutex<(Int, String?)?>(nil)
        let answered = DispatchSemaphore(value: 0)
        Thread {
            let answer = try? server.connect(timeoutSeconds: 60).request(
                "PUT", "/v1/lists/slow", headers: json + [("If-Match", "*")],
                body: Array(#"{"sections":[{"id":"b","items":[]}]}"#.utf8))
            second.withLock { $0 = answer.map { ($0.status, $0.headers["ETag"]) } }
            answered.signal()
        }.start()
        // The second write reads its request and waits for the list's lock. Its queue's second thread may
        // take a while to start (libdispatch adds a worker after seeing one blocked), so the wait is long;
        // were it too short, the test would only pass on the old code too, never fail on the new.
        usleep(1_500_000)
        store.release.signal()
        store.release.signal()  // the second write's commit
        released = true
        #expect(answered.wait(timeout: .now() + 30) == .success)
        let deadline = ContinuousClock.now + .seconds(30)
        while first.withLock({ $0 }) == nil && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(first.withLock { $0 } == 200)
        #expect(second.withLock { $0?.0 } == 200)
        #expect(second.withLock { $0?.1 } == "\"3\"")
        #expect(service.registry.version(of: "slow")?.sectionIDs == ["b"])
        // A list that does not exist matches no tag, `*` included.
        let missing = try server.connect().request(
            "PUT", "/v1/lists/none", headers: json + [("If-Match", "*")], body: Array(#"{"sections":[]}"#.utf8))
        #expect(missing.status == 412)
    }

    @Test(
        "shutting down: a write in flight is answered with its outcome, a write that arrives meanwhile is refused at once"
    )
    func writesDuringShutdown() throws {
        let store = GatedStore()
        // The connections opened before the shutdown must not be closed idle while a loaded machine gets the
        // write to the store.
        let (service, server) = try Self.serve(store) { $0.http.connectionTimeoutSeconds = 600 }
        // Opened before the shutdown, which stops accepting connections; kept alive through it.
        let late = try server.connect(timeoutSeconds: 600)
        #expect(try late.request("GET", "/healthz").status == 200)
        defer { for _ in 0..<4 { store.release.signal() } }  // never leave a commit waiting, whatever failed

        let written = Mutex<Result<Int, HTTPClientError>?>(nil)
        let answered = DispatchSemaphore(value: 0)
        // The writer's answer comes only once the store is released below, after the shutdown began and the late
        // write was refused: on a loaded machine that took over a minute, so its socket waits as long as the test.
        let writer = Thread {
            let outcome: Result<Int, HTTPClientError>
            do {
                outcome = .success(
                    try server.connect(timeoutSeconds: 600).request(
                        "PUT", "/v1/lists/slow", headers: [("Content-Type", "application/json")],
                        body: Array(#"{"sections":[{"id":"s","items":[]}]}"#.utf8)
                    ).status)
            } catch {
                outcome = .failure(HTTPClientError("\(error)"))
            }
            written.withLock { $0 = outcome }
            answered.signal()
        }
        writer.start()
        #expect(store.entered.wait(timeout: .now() + 30) == .success, "the write never reached the store")
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            service.shutdown()
            stopped.signal()
        }.start()
        let draining = ContinuousClock.now + .seconds(30)
        // Watched in the process: a response while draining closes its connection, and no new one is accepted.
        while service.readiness.state != .draining && ContinuousClock.now < draining { usleep(1_000) }

        // The late write is not made, and its answer does not wait for the store: it comes while the store
        // still holds the first commit (released only below), and the write never reached the store. No clock
        // is read: a loaded machine (make test builds in another lane) can stall any request for seconds.
        let refused = try late.request(
            "PUT", "/v1/lists/slow", headers: [("Content-Type", "application/json")],
            body: Array(#"{"sections":[{"id":"t","items":[]}]}"#.utf8))
        #expect(store.entered.wait(timeout: .now()) == .timedOut, "the late write reached the store")
        #expect(refused.status == 503)
        #expect(try refused.problemSlug() == "overloaded")
        #expect(try refused.object()["written"] as? String == "no")
        #expect(refused.headers["Retry-After"] != nil)

        store.release.signal()
        #expect(stopped.wait(timeout: .now() + 30) == .success, "the shutdown did not finish")
        // The writer's thread reads the answer after the server sent it, which may be after the shutdown ended.
        #expect(answered.wait(timeout: .now() + 30) == .success, "the write was not answered")
        #expect(try written.withLock { $0 }?.get() == 201)
        #expect(service.registry.version(of: "slow")?.sectionIDs == ["s"])
    }
}

extension StoreWriteTests {
    @Test(
        "a write of a store on this machine's disk is made on the receiving thread when nothing else writes; otherwise, or after a slow one, off that thread"
    )
    func aloneOnTheReceivingThread() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quire-alone-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try SQLiteListStore(path: folder.appendingPathComponent("quire.sqlite").path).syncsLocally)
        #expect(try !SQLiteListStore(path: SQLiteListStore.inMemoryPath).syncsLocally)
        #expect(!GatedStore().syncsLocally, "a decorator that may wait keeps its writes on lanes")

        // No limit here: a write held on purpose below (or one preempted on a busy machine) must not bar the rest.
        let writes = WriteScheduler(aloneLimit: .seconds(3600))
        let ok = Reply.response(Response(status: 200))
        let caller = Thread.current
        var ranHere = false
        #expect(
            try writes.alone { () throws(Problem) -> Reply in
                ranHere = Thread.current == caller
                return ok
            } != nil)
        #expect(ranHere)

        // A write on a lane: the next one queues behind it there, rather than wait on the disk on this thread.
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        _ = writes.deferred(list: "busy") {
            release.wait()
            done.signal()
            return Response(status: 200)
        }
        #expect(try writes.alone { () throws(Problem) -> Reply in ok } == nil)
        release.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        writes.waitUntilIdle()

        // One write made alone at a time: a second caller meanwhile goes to its lane.
        let inside = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        let first = Thread {
            _ = try? writes.alone { () throws(Problem) -> Reply in
                inside.signal()
                leave.wait()
                return ok
            }
        }
        first.start()
        #expect(inside.wait(timeout: .now() + 30) == .success)
        #expect(try writes.alone { () throws(Problem) -> Reply in ok } == nil)
        leave.signal()

        // A slow one (a disk stall) sends the next writes elsewhere for a hundred times as long as it took, then they
        // come back.
        let barring = WriteScheduler(aloneLimit: .milliseconds(5), aloneBar: .seconds(60))
        var slow: Reply?
        let took = try ContinuousClock().measure {
            slow = try barring.alone { () throws(Problem) -> Reply in
                Thread.sleep(forTimeInterval: 0.01)
                return ok
            }
        }
        #expect(slow != nil)
        #expect(try barring.alone { () throws(Problem) -> Reply in ok } == nil)
        let barred = took * Int(WriteScheduler.aloneBarFactor)
        Thread.sleep(forTimeInterval: Double(barred.components.seconds) + Double(barred.components.attoseconds) / 1e18)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try barring.alone { () throws(Problem) -> Reply in ok } != nil)

        // However slow, for `aloneBar` at most.
        let capped = WriteScheduler(aloneLimit: .milliseconds(5), aloneBar: .seconds(1))
        #expect(
            try capped.alone { () throws(Problem) -> Reply in
                Thread.sleep(forTimeInterval: 0.05)
                return ok
            } != nil)
        #expect(try capped.alone { () throws(Problem) -> Reply in ok } == nil)
        Thread.sleep(forTimeInterval: 1.3)
        #expect(try capped.alone { () throws(Problem) -> Reply in ok } != nil)
    }
}

extension StoreWriteTests {
    @Test(
        "writes that arrive while the writer commits are made together in its next transaction, each answered with its own outcome"
    )
    func madeTogether() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quire-together-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = try GatedBatchStore(path: folder.appendingPathComponent("quire.sqlite").path)
        let registry = ListRegistry(store: store, limits: ListLimits())
        let empty = try JSONParser().parse(#"{"sections":[{"id":"s","items":[]}]}"#)
        for name in ["slow", "x1", "x2", "x3"] {
            _ = try registry.write(name) { _ throws(ListRegistry.WriteError) in .replace(empty) }
        }
        let insert = try JSONParser().parse(
            #"{"ops":[{"op":"insertItems","section":"s","items":[{"id":"i","type":"t"}]}]}"#)

        let writes = WriteScheduler()
        let answers = Mutex<[String: Int]>([:])
        let answered = DispatchSemaphore(value: 0)
        func enqueue(_ name: String, ifMatch: ListRegistry.IfMatch? = nil) {
            let reply = writes.together(
                ListRegistry.QueuedWrite(name, ifMatch: ifMatch, mustExist: true, write: .ops(insert)), in: registry
            ) { outcome in
                switch outcome {
                case .success: Response(status: 200)
                case .failure(.versionMismatch): Response(status: 412)
                case .failure: Response(status: 500)
                }
            }
            guard case .deferred(let pending) = reply else {
                Issue.record("a write handed to the writer is answered later")
                return
            }
            pending.whenResolved { response in
                answers.withLock { $0[name] = response.status }
                answered.signal()
            }
        }

        enqueue("slow")
        #expect(store.entered.wait(timeout: .now() + 30) == .success)
        // The writer is committing: these wait for it, and a write that arrives now is not made alone either.
        enqueue("x1")
        enqueue("x2")
        enqueue("x3", ifMatch: [99])
        #expect(try writes.alone { () throws(Problem) -> Reply in .response(Response(status: 200)) } == nil)
        store.release.signal()
        for _ in 0..<4 { #expect(answered.wait(timeout: .now() + 30) == .success) }
        writes.waitUntilIdle()

        #expect(answers.withLock { $0 } == ["slow": 200, "x1": 200, "x2": 200, "x3": 412])
        // One transaction for the two writes made (the refused one is not committed), after the slow one's.
        #expect(store.batches.withLock { $0 } == [["slow"], ["x1", "x2"]])
        #expect(registry.version(of: "x1")?.itemCount == 1)
        #expect(registry.version(of: "x3")?.itemCount == 0)
        #expect(try writes.alone { () throws(Problem) -> Reply in .response(Response(status: 200)) } != nil)
    }
}

extension WriteScheduler {
    /// The reply of a connection's `write`, made alone on the calling thread (``alone(refused:_:)``), or `nil`.
    fileprivate func alone(_ write: () throws(Problem) -> Reply) throws(Problem) -> Reply? {
        try alone(refused: { Self.refusal }, write)
    }
}
