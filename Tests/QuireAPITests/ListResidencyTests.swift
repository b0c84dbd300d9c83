import Foundation
import QuireClient
import QuireHTTP
import QuireStore
import QuireTesting
import Synchronization
import Testing

@testable import QuireAPI
@testable import QuireCore

/// Lists beyond memory (issue: only the lists in use are held): over HTTP, on a real SQLite file, with a memory
/// budget of a few lists.
@Suite("Lists beyond memory")
struct ListResidencyTests {
    /// A SQLite file in a folder of its own.
    static func storePath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("quire-residency-\(UUID())/quire.sqlite").path
    }

    /// The model of one list: its one section's item ids in order, each with the number of its last update.
    struct ModelList {
        var ids: [String]
        var data: [String: Int]
        var version: Int
    }

    /// 1 to 3 random ops on `list`, applied to the model as the service must apply them.
    static func randomOps(_ list: inout ModelList, counter: inout Int, random: inout SeededGenerator) -> [[String: Any]]
    {
        var ops: [[String: Any]] = []
        for _ in 0..<(1 + Int(random.next() % 3)) {
            counter += 1
            let anchor = list.ids.isEmpty ? nil : list.ids[Int(random.next() % UInt64(list.ids.count))]
            switch (random.next() % 4, anchor) {
            case (0, _), (_, nil):
                let id = "w-\(counter)"
                var op: [String: Any] = [
                    "op": "insertItems", "section": "s", "items": [["id": id, "type": "row", "data": ["n": counter]]],
                ]
                if let anchor {
                    op["after"] = anchor
                    list.ids.insert(id, at: list.ids.firstIndex(of: anchor)! + 1)
                } else {
                    list.ids.append(id)
                }
                list.data[id] = counter
                ops.append(op)
            case (1, let anchor?):
                list.ids.removeAll { $0 == anchor }
                list.data[anchor] = nil
                ops.append(["op": "removeItems", "ids": [anchor]])
            case (2, let anchor?):
                list.ids.removeAll { $0 == anchor }
                guard let target = list.ids.isEmpty ? nil : list.ids[Int(random.next() % UInt64(list.ids.count))]
                else {
                    list.ids.append(anchor)
                    ops.append(["op": "moveItem", "id": anchor, "section": "s"])
                    continue
                }
                list.ids.insert(anchor, at: list.ids.firstIndex(of: target)! + 1)
                ops.append(["op": "moveItem", "id": anchor, "section": "s", "after": target])
            case (_, let anchor?):
                list.data[anchor] = counter
                ops.append(["op": "updateItems", "items": [["id": anchor, "type": "row", "data": ["n": counter]]]])
            }
        }
        list.version += 1
        return ops
    }

    /// The model's items as the service sends them, for comparison with a window or a page.
    static func items(_ list: ModelList, _ ids: some Sequence<String>) -> [ClientJSON] {
        ids.map { id in
            .object([
                "id": .string(id), "type": .string("row"), "data": .object(["n": .number(Double(list.data[id]!))]),
            ])
        }
    }

    @Test(
        "a budget of a few lists: random writes to 30 lists while sessions in both formats follow 6; lists leave memory and come back, every window exact, none reset, no write lost"
    )
    func randomWritesUnderEviction() throws {
        let path = Self.storePath()
        let document = { (index: Int) -> [String: Any] in
            [
                "sections": [
                    ["id": "s", "items": (0..<15).map { ["id": "r\(index)-\($0)", "type": "row", "data": ["n": 0]] }]
                ]
            ]
        }
        // A budget of about eight such lists: the six that sessions hold, and two more.
        let sample = try JSONParser().parse(Array(try JSONSerialization.data(withJSONObject: document(0))))
        let budget = 8 * ListFootprint(measuring: try ListVersion(document: sample)).bytes
        let api = try APIFixture(store: try SQLiteListStore(path: path)) {
            $0.lists.memoryBytes = budget
            $0.sessions.resetShare = 1_000  // any reset here would be a spurious one
        }
        defer { api.stop() }
        let registry = api.service.registry
        var model: [String: ModelList] = [:]
        for index in 0..<30 {
            let ids = (0..<15).map { "r\(index)-\($0)" }
            model["r-\(index)"] = ModelList(
                ids: ids, data: Dictionary(uniqueKeysWithValues: ids.map { ($0, 0) }), version: 1)
            try api.put("r-\(index)", document(index))
        }
        #expect(registry.evictionCount > 0, "30 lists do not fit: some left memory already")
        #expect(registry.resident.bytes <= budget)

        // Sessions on six lists: they pin them (a pinned list stays whatever the budget).
        let clients = try (0..<6).map { index in
            try SessionClient(
                api, list: "r-\(index)", options: ["limit": 6, "format": index % 2 == 0 ? "batch" : "sequential"])
        }
        var random = SeededGenerator(seed: 46)
        var counter = 0
        for round in 0..<60 {
            for _ in 0..<4 {
                let name = "r-\(Int(random.next() % 30))"
                let ops = Self.randomOps(&model[name]!, counter: &counter, random: &random)
                #expect(try api.ops(name, ops) == model[name]!.version, "round \(round), \(name)")
            }
            // Every list a session follows comes back from the store now and then, as a fresh version (a new id
            // table, no change log): what a list that left memory and was loaded again is to its sessions.
            if round % 7 == 3 {
                // As a change feed does when a list's changes are past its log: read again whole.
                for (name, _) in registry.followedLists() { try registry.follow(name, to: .max) }
            }
            for (index, client) in clients.enumerated() {
                let answer = try client.sync(round % 4 == 1 ? "&extend=next&limit=2" : "")
                #expect(answer["reset"] == nil, "round \(round): a session was reset")
                let list = model["r-\(index)"]!
                #expect(client.version == list.version)
                let ids = client.window.itemIDs
                let start = try #require(ids.first.flatMap { list.ids.firstIndex(of: $0) } ?? (ids.isEmpty ? 0 : nil))
                #expect(ids == Array(list.ids[start..<min(list.ids.count, start + ids.count)]), "round \(round)")
                #expect(client.window.sections.first?.items == Self.items(list, ids), "round \(round)")
                #expect(registry.contains("r-\(index)"), "a list sessions hold stays in memory")
            }
            // A stateless page of a list that may have left memory: loaded again, exactly the model.
            let cold = "r-\(6 + Int(random.next() % 24))"
            let page = try api.call("GET", "/v1/lists/\(cold)?limit=500")
            #expect(page.status == 200)
            let sections = try #require(try page.object()["sections"])
            let window = try ClientWindow(pageSections: JSONSerialization.data(withJSONObject: sections))
            #expect(window.sections.first?.items == Self.items(model[cold]!, model[cold]!.ids), "round \(round)")
        }
        #expect(registry.evictionCount > 30)
        #expect(registry.loadCount > 30)
        // Nothing acknowledged is lost: the file, read afresh, holds every list as the model does.
        let stored = try SQLiteListStore(path: path).loadAll(limits: ListLimits())
        for (name, list) in model {
            let version = try #require(stored[name])
            #expect(version.version == UInt64(list.version), "\(name)")
            #expect(version.window(range: 0..<version.visibleCount()).itemIDs == list.ids, "\(name)")
        }
        // Sessions over, their lists may leave too.
        for client in clients { _ = try api.call("DELETE", "/v1/sessions/\(client.id)") }
        #expect(registry.pins.count == 0)
        for index in 6..<30 { _ = try api.call("GET", "/v1/lists/r-\(index)") }
        #expect((0..<6).contains { !registry.contains("r-\($0)") })
    }

    @Test("50 concurrent first requests for one cold list: one load from the store, every answer the list")
    func oneLoadForConcurrentRequests() throws {
        let path = Self.storePath()
        do {
            let seeded = try APIFixture(store: try SQLiteListStore(path: path))
            try seeded.put("cold", listDocument(sections: 3, items: 2_000))
            seeded.stop()
        }
        let api = try APIFixture(store: try SQLiteListStore(path: path))
        defer { api.stop() }
        let registry = api.service.registry
        #expect(registry.resident.lists == 0, "start-up reads no list")
        let statuses = Mutex<[Int]>([])
        try concurrently(50) { thread in
            let path = thread % 2 == 0 ? "/v1/lists/cold?limit=20" : "/v1/lists/cold/sessions"
            let response = try api.call(thread % 2 == 0 ? "GET" : "POST", path)
            statuses.withLock { $0.append(response.status) }
        }
        #expect(
            statuses.withLock { $0.sorted() } == Array(repeating: 200, count: 25) + Array(repeating: 201, count: 25))
        #expect(registry.loadCount == 1, "one load, shared by every request that found the list cold")
        let metrics = try api.call("GET", "/metrics").text.split(separator: "\n")
        #expect(metrics.contains("quire_list_loads_total 1"))
        #expect(metrics.contains("quire_lists_resident 1.0"))
        #expect(metrics.contains("quire_list_load_seconds_count 1"))
    }

    @Test("names that do not exist: one lookup each, nothing kept in memory, whatever their number")
    func missingNames() throws {
        let api = try APIFixture(store: try SQLiteListStore(path: Self.storePath()))
        defer { api.stop() }
        let registry = api.service.registry
        for index in 0..<300 {
            let response = try api.call(
                index % 3 == 0 ? "POST" : "GET", "/v1/lists/missing-\(index)" + (index % 3 == 0 ? "/sessions" : ""))
            #expect(response.status == 404)
            #expect(try response.problemSlug() == "list-not-found")
        }
        let ops = try api.call("POST", "/v1/lists/missing-x/ops", json: ["ops": [["op": "removeItems", "ids": ["a"]]]])
        #expect(ops.status == 404)
        #expect(registry.resident.lists == 0)
        #expect(registry.pins.count == 0)
        #expect(registry.lockCount == 0, "no lock is left behind for a name that does not exist")
    }

    @Test("writes to cold lists behave as on lists held: If-Match, ops, replace, delete, then create again")
    func writesToColdLists() throws {
        let path = Self.storePath()
        do {
            let seeded = try APIFixture(store: try SQLiteListStore(path: path))
            try seeded.put("w", listDocument(sections: 1, items: 3))
            try seeded.ops("w", [["op": "removeItems", "ids": ["s0-0"]]])
            seeded.stop()
        }
        // Restarted: nothing held; each write below finds the list cold (a budget of one byte sends it out again).
        let api = try APIFixture(store: try SQLiteListStore(path: path)) { $0.lists.memoryBytes = 1 }
        defer { api.stop() }
        let registry = api.service.registry
        let stale = try api.call(
            "POST", "/v1/lists/w/ops", json: ["ops": [["op": "removeItems", "ids": ["s0-1"]]]],
            headers: [("If-Match", "\"1\"")])
        #expect(stale.status == 412)
        #expect(stale.headers["ETag"] == "\"2\"")
        #expect(!registry.contains("w"))
        let matching = try api.call(
            "POST", "/v1/lists/w/ops", json: ["ops": [["op": "removeItems", "ids": ["s0-1"]]]],
            headers: [("If-Match", "\"2\"")])
        #expect(matching.status == 200)
        #expect(try matching.object()["version"] as? Int == 3)
        let bad = try api.call("POST", "/v1/lists/w/ops", json: ["ops": [["op": "removeItems", "ids": ["nope"]]]])
        #expect(bad.status == 422)
        #expect(try api.put("w", listDocument(sections: 2, items: 1)) == 4)
        #expect(try api.call("DELETE", "/v1/lists/w", headers: [("If-Match", "\"3\"")]).status == 412)
        #expect(try api.call("DELETE", "/v1/lists/w").status == 204)
        #expect(try api.call("GET", "/v1/lists/w").status == 404)
        // Created again: its versions go on from the deleted list's.
        #expect(try api.put("w", listDocument(sections: 1, items: 1)) == 5)
        let page = try api.call("GET", "/v1/lists/w")
        #expect(page.headers["ETag"] == "\"5\"")
    }

    @Test(
        "lists that sessions hold over the budget stay; a session on another cold list is refused with 503 until some end"
    )
    func overBudgetWithPinnedLists() throws {
        let api = try APIFixture(store: try SQLiteListStore(path: Self.storePath())) { $0.lists.memoryBytes = 1 }
        defer { api.stop() }
        let registry = api.service.registry
        try api.put("a", listDocument(sections: 1, items: 5))
        try api.put("b", listDocument(sections: 1, items: 5))
        let first = try SessionClient(api, list: "a")
        try api.put("b", listDocument(sections: 1, items: 6))  // a write: the budget is enforced, "a" cannot leave
        #expect(registry.contains("a"))
        #expect(registry.isOverBudget)
        let refused = try api.call("POST", "/v1/lists/b/sessions")
        #expect(refused.status == 503)
        #expect(try refused.problemSlug() == "overloaded")
        #expect(refused.headers["Retry-After"] != nil)
        #expect(try api.call("GET", "/v1/lists/b").status == 200, "pages are still served")
        _ = try api.call("DELETE", "/v1/sessions/\(first.id)")
        _ = try api.call("GET", "/v1/lists/b")
        #expect(!registry.isOverBudget)
        #expect(try api.call("POST", "/v1/lists/b/sessions").status == 201)
    }

    @Test(
        "lists nothing read, wrote or held for lists.idleSeconds leave memory, whatever the budget; a read brings one back as it was"
    )
    func idleListsLeave() throws {
        let api = try APIFixture(store: try SQLiteListStore(path: Self.storePath())) { $0.lists.idleSeconds = 300 }
        defer { api.stop() }
        let registry = api.service.registry
        for name in ["idle-a", "idle-b", "held"] { try api.put(name, listDocument(sections: 1, items: 5)) }
        try api.ops("idle-b", [["op": "removeItems", "ids": ["s0-0"]]])
        let client = try SessionClient(api, list: "held")
        // A pass takes note of the requests since the last (the writes, the session's opening); 300 s later, every
        // list is idle but the one a session holds. The housekeeping's own passes run on the real clock meanwhile:
        // they can only take note earlier (what this test checks of a list in use is in `idleCountsRequests`).
        registry.releaseIdle(now: .now)
        registry.releaseIdle(now: .now + .seconds(301))
        #expect(!registry.contains("idle-a") && !registry.contains("idle-b"))
        #expect(registry.contains("held"), "a session holds it")
        #expect(registry.idleReleaseCount == 2)
        #expect(registry.evictionCount == 0, "the budget had nothing to do with it")
        let metrics = try api.call("GET", "/metrics").text.split(separator: "\n")
        #expect(metrics.contains("quire_list_idle_releases_total 2"))
        #expect(metrics.contains("quire_lists_resident 1.0"))
        // Read again: loaded from storage as it was (same version), and held again.
        let loads = registry.loadCount
        let page = try api.call("GET", "/v1/lists/idle-b")
        #expect(page.status == 200)
        #expect(page.headers["ETag"] == "\"2\"")
        #expect(registry.contains("idle-b"))
        #expect(registry.loadCount == loads + 1)
        // The session ended: its list goes idle too (held until the pass 301 s ahead, idle from then on).
        #expect(try api.call("DELETE", "/v1/sessions/\(client.id)").status == 204)
        registry.releaseIdle(now: .now + .seconds(400))
        registry.releaseIdle(now: .now + .seconds(800))
        #expect(registry.resident.lists == 0)
    }

    @Test("lists.idleSeconds 0: lists never leave memory for being idle")
    func idleReleaseOff() throws {
        let api = try APIFixture(store: try SQLiteListStore(path: Self.storePath())) { $0.lists.idleSeconds = 0 }
        defer { api.stop() }
        try api.put("kept", listDocument(sections: 1, items: 5))
        api.service.registry.releaseIdle(now: .now + .seconds(1_000_000))
        #expect(api.service.registry.contains("kept"))
        #expect(api.service.registry.idleTimeout == nil)
    }

    @Test(
        "idle is counted from the last request or session: reads and writes keep a list, replication's reads and pins held do not let it go early"
    )
    func idleCountsRequests() throws {
        let store = try SQLiteListStore(path: Self.storePath())
        let registry = ListRegistry(store: store, limits: ListLimits(), idleTimeout: .seconds(300))
        let document = try JSONParser().parse(Array(#"{"sections":[{"id":"s","items":[{"id":"a","type":"t"}]}]}"#.utf8))
        for name in ["read", "seen", "pinned", "written"] {
            _ = try registry.write(name) { previous throws(ListRegistry.WriteError) in
                do { return try ListVersion(document: document) } catch {
                    throw .invalidList(error as! ListValidationError)
                }
            }
        }
        registry.pins.add("pinned")
        let start = ContinuousClock.now
        registry.releaseIdle(now: start + .seconds(1))  // every list was requested (written): used at 1 s
        #expect(registry.resident.lists == 4)
        _ = try registry.loadedVersion(of: "read")  // a request
        _ = registry.version(of: "seen")  // what replication and observers read: not a request
        _ = try registry.write("written") { previous throws(ListRegistry.WriteError) in
            do { return try previous!.replacing(with: document) } catch {
                throw .invalidList(error as! ListValidationError)
            }
        }
        registry.releaseIdle(now: start + .seconds(302))
        #expect(!registry.contains("seen"), "idle since 1 s")
        #expect(registry.contains("read") && registry.contains("written") && registry.contains("pinned"))
        registry.pins.remove("pinned")
        registry.releaseIdle(now: start + .seconds(303))
        #expect(registry.contains("pinned"), "held until the pass at 302 s: idle from then on")
        registry.releaseIdle(now: start + .seconds(601))
        #expect(registry.contains("pinned") && registry.contains("read") && registry.contains("written"))
        registry.releaseIdle(now: start + .seconds(603))
        #expect(registry.resident.lists == 0)
        #expect(registry.idleReleaseCount == 4)
        #expect(try registry.loadedVersion(of: "written")?.version == 2, "loaded again as it was")

        let memory = ListRegistry(store: InMemoryListStore(), limits: ListLimits(), idleTimeout: .seconds(300))
        #expect(memory.idleTimeout == nil, "a store that keeps no lists: memory is their only copy")
    }
}
