import Foundation
import QuireClient
import QuireCore
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

@testable import QuireAPI
@testable import QuireAuth

/// What clients rely on under concurrent writes: paging in a session never duplicates or skips an item,
/// and the changes always bring a client's window to exactly the server's.
@Suite("Consistency under concurrent writes", .serialized)
struct ConsistencyTests {
    /// A random batch of ops against the list's current top-level items (ids from `counter` are new).
    static func randomOps(ids: [String], sections: [String], counter: inout Int, random: inout SeededGenerator)
        -> [[String:
        Any]]
    {
        var ops: [[String: Any]] = []
        var removed = Set<String>()
        func pick() -> String? {
            for _ in 0..<8 {
                let id = ids[Int(random.next() % UInt64(ids.count))]
                if !removed.contains(id) { return id }
            }
            return nil
        }
        for _ in 0..<(1 + Int(random.next() % 4)) {
            guard !ids.isEmpty, let anchor = pick() else { break }
            switch random.next() % 4 {
            case 0:
                counter += 1
                ops.append([
                    "op": "insertItems", "section": sections[Int(random.next() % UInt64(sections.count))],
                    "items": [["id": "w-\(counter)", "type": "row", "data": ["n": counter]]],
                ])
            case 1:
                removed.insert(anchor)
                ops.append(["op": "removeItems", "ids": [anchor]])
            case 2:
                guard let target = pick(), target != anchor else { continue }
                removed.insert(anchor)  // moved: not an anchor any more in this batch
                ops.append([
                    "op": "moveItem", "id": anchor, "section": sections[Int(random.next() % UInt64(sections.count))],
                ])
                _ = target
            default:
                ops.append(["op": "updateItems", "items": [["id": anchor, "type": "row", "data": ["v": counter]]]])
            }
        }
        return ops
    }

    @Test(
        "a client pages through 5,000 items in a session while another writes: exactly the list, no duplicate, no gap")
    func pagingWhileWriting() throws {
        let api = try APIFixture { $0.sessions.resetShare = 1_000 }
        defer { api.stop() }
        try api.put("big", listDocument(sections: 10, items: 500))
        let writing = Atomic<Bool>(true)
        let writes = Atomic<Int>(0)
        let writer = DetachedThread.startJoinable {
            var random = SeededGenerator(seed: 42)
            var counter = 0
            let sections = (0..<10).map { "sec-\($0)" }
            while writing.load(ordering: .relaxed) {
                let ops = Self.randomOps(
                    ids: api.listIDs("big"), sections: sections, counter: &counter, random: &random)
                if !ops.isEmpty, (try? api.call("POST", "/v1/lists/big/ops", json: ["ops": ops]))?.status == 200 {
                    writes.add(1, ordering: .relaxed)
                }
                sleep(milliseconds: 2)
            }
        }
        let client = try SessionClient(api, list: "big", options: ["limit": 50])
        var requests = 0
        while client.hasNext && requests < 1_000 {
            // Each page waits for a write since the previous page (bounded), so that pages and writes
            // interleave however slow or busy the machine is.
            let writtenBefore = writes.load(ordering: .relaxed)
            let deadline = ContinuousClock.now + .seconds(5)
            while writes.load(ordering: .relaxed) == writtenBefore && ContinuousClock.now < deadline {
                sleep(milliseconds: 1)
            }
            try client.sync("&extend=next&limit=100")
            requests += 1
        }
        writing.store(false, ordering: .relaxed)
        writer.join()
        // Catch up with the last writes, then read to the end.
        repeat {
            try client.sync("&extend=next&limit=500")
        } while client.hasNext
        let ids = client.window.itemIDs
        #expect(writes.load(ordering: .relaxed) > 10, "the writer should have written while the client paged")
        #expect(Set(ids).count == ids.count, "duplicates in the client's window")
        #expect(ids == api.listIDs("big"))
        #expect(client.window == (try api.freshWindow(ofSession: client.id)))
    }

    @Test("random writes, then changes in both formats: each client equals a fresh read of its range")
    func randomWritesBothFormats() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 5, items: 40, childrenEvery: 7))
        let clients = try [
            SessionClient(api, list: "l", options: ["limit": 30, "format": "batch"]),
            SessionClient(api, list: "l", options: ["limit": 30, "format": "sequential"]),
            SessionClient(
                api, list: "l", options: ["limit": 25, "format": "batch", "around": "s2-20", "expanded": ["s2-21"]]),
            SessionClient(api, list: "l", options: ["limit": 25, "format": "sequential", "around": "s3-7"]),
        ]
        var random = SeededGenerator(seed: 7)
        var counter = 0
        let sections = (0..<5).map { "sec-\($0)" }
        for round in 0..<60 {
            let ops = Self.randomOps(ids: api.listIDs("l"), sections: sections, counter: &counter, random: &random)
            if !ops.isEmpty { try api.ops("l", ops) }
            for client in clients {
                switch round % 5 {
                case 1: try client.sync("&extend=next&limit=3")
                case 3: try client.sync("&extend=prev&limit=2")
                default: try client.sync()
                }
                #expect(
                    client.window == (try api.freshWindow(ofSession: client.id)), "round \(round), \(client.format)")
            }
        }
    }

    @Test("200 concurrent sessions from many threads, with writes going on")
    func concurrentSessions() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 4, items: 100))
        let writing = Atomic<Bool>(true)
        let writer = DetachedThread.startJoinable {
            var counter = 0
            while writing.load(ordering: .relaxed) {
                counter += 1
                _ = try? api.ops(
                    "l",
                    [
                        [
                            "op": "insertItems", "section": "sec-\(counter % 4)",
                            "items": [["id": "c-\(counter)", "type": "row"]],
                        ]
                    ])
                sleep(milliseconds: 5)
            }
        }
        let created = Atomic<Int>(0)
        try concurrently(20) { thread in
            for index in 0..<10 {
                let client = try SessionClient(
                    api, list: "l", options: ["limit": 20, "format": index % 2 == 0 ? "batch" : "sequential"])
                created.add(1, ordering: .relaxed)
                for _ in 0..<3 {
                    try client.sync("&extend=next&limit=5")
                }
                #expect(client.window == (try api.freshWindow(ofSession: client.id)), "thread \(thread)")
            }
        }
        writing.store(false, ordering: .relaxed)
        writer.join()
        #expect(created.load(ordering: .relaxed) == 200)
        #expect(api.service.context.sessions.count == 200)
    }
}
