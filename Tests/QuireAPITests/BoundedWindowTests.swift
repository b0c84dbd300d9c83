import Foundation
import QuireClient
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

@testable import QuireAPI
@testable import QuireCore

/// Bounded windows (openapi.yaml) and answers that cost what changed, over HTTP, applied by QuireClient.
@Suite("Bounded windows")
struct BoundedWindowTests {
    /// A list of `count` items in 4 sections (ids `b<n>`), written with ops so that versions carry their
    /// change log, as a producer's would.
    private func makeList(_ api: APIFixture, count: Int) throws {
        let perSection = count / 4
        try api.put(
            "feed",
            [
                "sections": (0..<4).map {
                    ["id": "sec-\($0)", "header": ["type": "day", "data": ["n": $0]], "items": []]
                }
            ])
        for section in 0..<4 {
            for chunk in stride(from: 0, to: perSection, by: 2_500) {
                let items = (chunk..<min(chunk + 2_500, perSection)).map { index -> [String: Any] in
                    ["id": "b\(section * perSection + index)", "type": "row", "data": ["n": index]]
                }
                try api.ops("feed", [["op": "insertItems", "section": "sec-\(section)", "items": items]])
            }
        }
    }

    @Test(
        "a client scrolls 20,000 items with keep=500 while a producer writes: never more than 500, always exact, and back without a gap or a duplicate",
        arguments: ["batch", "sequential"])
    func scrollWithKeep(format: String) throws {
        let api = try APIFixture { $0.sessions.resetShare = 100 }
        defer { api.stop() }
        try makeList(api, count: 20_000)
        let client = try SessionClient(api, list: "feed", options: ["limit": 50, "keep": 500, "format": format])

        // A producer edits the list while the client scrolls forward.
        let writing = Atomic<Bool>(true)
        let writes = Atomic<Int>(0)
        let producer = Thread {
            var random = SeededGenerator(seed: 9)
            var next = 0
            while writing.load(ordering: .relaxed) {
                let target = "b\(Int.random(in: 0..<20_000, using: &random))"
                let ops: [[String: Any]]
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    next += 1
                    ops = [["op": "insertItems", "after": target, "items": [["id": "w\(next)", "type": "row"]]]]
                case 1:
                    ops = [["op": "updateItems", "items": [["id": target, "type": "row", "data": ["edited": next]]]]]
                default:
                    let anchor = "b\(Int.random(in: 0..<20_000, using: &random))"
                    ops = [["op": "moveItem", "id": target, "after": anchor]]
                }
                // Moves of an item after itself, or of an item moved away, are refused: that is fine here.
                if (try? api.call("POST", "/v1/lists/feed/ops", json: ["ops": ops]))?.status == 200 {
                    writes.add(1, ordering: .relaxed)
                }
                usleep(5_000)
            }
        }
        producer.start()
        var steps = 0
        while client.hasNext {
            try client.sync("&extend=next")
            steps += 1
            #expect(client.window.itemIDs.count <= 500)
            if steps % 10 == 0 {
                #expect(client.window == (try api.freshWindow(ofSession: client.id)), "step \(steps)")
            }
            if steps > 2_000 { break }
        }
        writing.store(false, ordering: .relaxed)
        while !producer.isFinished { usleep(1_000) }
        #expect(!client.hasNext, "never reached the end")
        #expect(writes.load(ordering: .relaxed) > 20, "the producer wrote too little to matter")
        #expect(client.hasPrev)

        // Writes stopped: catch up, then scroll back to the start collecting every item once.
        try client.sync()
        #expect(client.window == (try api.freshWindow(ofSession: client.id)))
        var collected = client.window.itemIDs
        while client.hasPrev {
            let first = client.window.itemIDs.first!
            try client.sync("&extend=prev")
            #expect(client.window.itemIDs.count <= 500)
            let ids = client.window.itemIDs
            let prepended = ids.prefix { $0 != first }
            #expect(prepended.count < ids.count, "the old first item left the window")
            collected.insert(contentsOf: prepended, at: 0)
        }
        #expect(collected == api.listIDs("feed"), "gap or duplicate on the way back")
        #expect(Set(collected).count == collected.count)
    }

    @Test("keep: validated, capped by sessions.maxKeep, and 0 means the configured bound")
    func keepOption() throws {
        let api = try APIFixture { $0.sessions.maxKeep = 600 }
        defer { api.stop() }
        try makeList(api, count: 2_000)
        for bad in [["keep": -1], ["keep": "x"], ["keep": 10, "limit": 20]] as [[String: Any]] {
            #expect(try api.call("POST", "/v1/lists/feed/sessions", json: bad).problemSlug() == "invalid-request")
        }
        let capped = try SessionClient(api, list: "feed", options: ["limit": 100, "keep": 5_000])
        for _ in 0..<10 { try capped.sync("&extend=next&limit=100") }
        #expect(capped.window.itemIDs.count == 600)
        #expect(capped.window.itemIDs.first == "b500")
        let defaulted = try SessionClient(api, list: "feed", options: ["limit": 100])
        for _ in 0..<10 { try defaulted.sync("&extend=next&limit=100") }
        #expect(defaulted.window.itemIDs.count == 600)
        // Back the other way: the end is trimmed, the start comes back as inserts.
        try defaulted.sync("&extend=prev&limit=200")
        #expect(defaulted.window.itemIDs.first == "b300")
        #expect(defaulted.window.itemIDs.count == 600)
        #expect(defaulted.hasNext && defaulted.hasPrev)
        // A reset keeps the bound: a page larger than keep is refused as at creation, and changes nothing.
        let bounded = try SessionClient(api, list: "feed", options: ["limit": 10, "keep": 20])
        let refused = try api.call("POST", "/v1/sessions/\(bounded.id)/reset", json: ["limit": 500])
        #expect(refused.status == 400)
        #expect(try refused.problemSlug() == "invalid-request")
        try bounded.sync()
        #expect(bounded.window.itemIDs.count == 10)
        let reset = try api.call("POST", "/v1/sessions/\(bounded.id)/reset", json: ["limit": 20])
        #expect(reset.status == 200)
    }

    @Test("a write that wakes many sessions holding the same window computes one answer for all of them")
    func sharedAnswers() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try makeList(api, count: 4_000)
        let clients = try (0..<20).map { _ in try SessionClient(api, list: "feed", options: ["limit": 200]) }
        let before = api.service.context.sharedAnswers.hitCount
        try api.ops("feed", [["op": "updateItems", "items": [["id": "b10", "type": "row", "data": ["x": 1]]]]])
        for client in clients {
            try client.sync()
            #expect(client.window == (try api.freshWindow(ofSession: client.id)))
        }
        #expect(api.service.context.sharedAnswers.hitCount - before == 19)
    }
}
