import QuireHTTP
import QuireTesting
import Synchronization
import Testing

@testable import QuireAPI

/// Long polls over a real server: suspended requests woken by a notification, by their deadline,
/// refused past the capacity, and answered at shutdown.
@Suite("Long polls", .serialized)
struct LongPollTests {
    static func server(_ polls: LongPolls) throws -> TestServer {
        let responder = ClosureResponder { request in
            let list = String(request.path.dropFirst())
            let seconds = Double(request.queryValue("wait") ?? "5") ?? 5
            do throws(Problem) {
                return try polls.wait(on: list, seconds: seconds) { wake in
                    Response(status: 200, text: "\(list):\(wake)")
                }
            } catch {
                return .response(error.response)
            }
        }
        return try TestServer(responder: responder)
    }

    @Test("a waiter is woken by its list's change within milliseconds, others keep waiting")
    func wokenByChange() throws {
        let polls = LongPolls(capacity: 100)
        let server = try Self.server(polls)
        defer { server.stop(); polls.shutdown() }
        let answers = Mutex<[String]>([])
        DetachedThread.start {
            while polls.count < 3 { sleep(milliseconds: 2) }
            polls.notify("a")
        }
        let clock = ContinuousClock()
        let start = clock.now
        try concurrently(3) { index in
            let list = index < 2 ? "a" : "b"
            let response = try server.connect().request("GET", "/\(list)?wait=\(list == "a" ? 10 : 0.5)")
            answers.withLock { $0.append(response.text) }
        }
        #expect(clock.now - start < .seconds(5))  // woken, well before the 10 s wait
        #expect(answers.withLock { $0.sorted() } == ["a:changed", "a:changed", "b:timedOut"])
        #expect(polls.count == 0)
    }

    @Test("a waiter whose list never changes is answered at its deadline")
    func timeout() throws {
        let polls = LongPolls(capacity: 10)
        let server = try Self.server(polls)
        defer { server.stop(); polls.shutdown() }
        let clock = ContinuousClock()
        let start = clock.now
        let response = try server.connect().request("GET", "/quiet?wait=0.3")
        let elapsed = clock.now - start
        #expect(response.text == "quiet:timedOut")
        #expect(elapsed >= .milliseconds(290))
        #expect(polls.count == 0)
    }

    @Test("past the capacity: 503 overloaded with Retry-After")
    func capacity() throws {
        let polls = LongPolls(capacity: 2)
        let server = try Self.server(polls)
        defer { server.stop(); polls.shutdown() }
        let statuses = Mutex<[Int]>([])
        DetachedThread.start {
            while polls.count < 2 { sleep(milliseconds: 2) }
            let third = try? server.connect().request("GET", "/x?wait=5")
            statuses.withLock { $0.append(third?.status ?? 0) }
            #expect(third?.headers["Retry-After"] == "1")
            polls.notify("x")
        }
        try concurrently(2) { _ in
            let response = try server.connect().request("GET", "/x?wait=5")
            statuses.withLock { $0.append(response.status) }
        }
        #expect(statuses.withLock { $0 } == [503, 200, 200])
    }

    @Test("shutdown answers every waiter and refuses new ones")
    func shutdown() throws {
        let polls = LongPolls(capacity: 100)
        let server = try Self.server(polls)
        defer { server.stop() }
        let answers = Mutex<[String]>([])
        DetachedThread.start {
            while polls.count < 4 { sleep(milliseconds: 2) }
            polls.shutdown()
        }
        try concurrently(4) { index in
            let response = try server.connect().request("GET", "/l\(index)?wait=30")
            answers.withLock { $0.append(response.text) }
        }
        #expect(answers.withLock { $0.allSatisfy { $0.hasSuffix(":shuttingDown") } })
        #expect(try server.connect().request("GET", "/late?wait=1").status == 503)
    }

    @Test("the deadline heap pops in deadline order")
    func heap() {
        var heap = DeadlineHeap()
        let base = ContinuousClock.now
        for (id, offset) in [(1, 50), (2, 10), (3, 30), (4, 20), (5, 40)] {
            heap.push(id: UInt64(id), deadline: base + .milliseconds(offset))
        }
        var popped: [UInt64] = []
        while let id = heap.popExpired(now: base + .milliseconds(35)) { popped.append(id) }
        #expect(popped == [2, 4, 3])
        #expect(heap.popExpired(now: base + .milliseconds(100)) == 5)
        #expect(heap.popExpired(now: base + .milliseconds(100)) == 1)
        #expect(heap.isEmpty)
    }
}
