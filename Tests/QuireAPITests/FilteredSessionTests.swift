import Foundation
import QuireClient
import QuireCore
import QuireHTTP
import QuireTesting
import Testing

@testable import QuireAPI

/// Filtered sessions and pages (openapi.yaml) over HTTP, against a model that filters the producer's document.
@Suite("Filtered sessions")
struct FilteredSessionTests {
    /// The producer's document as the model holds it.
    struct ModelItem {
        var id: String
        var type: String
        var data: [String: Any]
        var children: [String]
    }

    struct ModelSection {
        var id: String
        var items: [ModelItem]
    }

    /// A filter as a client writes it, with the model's own evaluation of it (written apart from the service's).
    struct Case: @unchecked Sendable {
        // Unchecked: `json` holds only immutable Foundation values (strings, numbers, booleans, arrays and
        // dictionaries of them) built once in `cases`, and `matches` captures nothing.
        let json: [String: Any]
        let matches: @Sendable (ModelItem) -> Bool
    }

    static let people = ["Ada", "Grace", "Alan"]
    static let subjects = ["Lunch on Friday", "Quarterly report", "LUNCH?", "Release notes", "Straße works"]

    static let cases: [Case] = [
        Case(json: ["field": "data.unread", "eq": true]) { $0.data["unread"] as? Bool == true },
        Case(json: ["field": "data.from", "in": ["Ada", "Grace"]]) {
            ["Ada", "Grace"].contains($0.data["from"] as? String ?? "")
        },
        Case(json: ["all": [["field": "data.unread", "eq": true], ["not": ["field": "data.from", "eq": "Alan"]]]]) {
            $0.data["unread"] as? Bool == true && $0.data["from"] as? String != "Alan"
        },
        Case(json: ["any": [["field": "data.subject", "contains": "lunch"], ["field": "data.n", "gte": 50]]]) {
            ($0.data["subject"] as? String)?.lowercased().contains("lunch") == true
                || ($0.data["n"] as? Int ?? -1) >= 50
        },
        Case(json: ["field": "data.flag", "exists": false]) { $0.data["flag"] == nil },
        Case(json: ["field": "type", "ne": "note"]) { $0.type != "note" },
        Case(json: ["field": "data.n", "lt": 20]) { ($0.data["n"] as? Int).map { $0 < 20 } ?? false },
    ]

    static func randomItem(_ id: String, random: inout SeededGenerator) -> ModelItem {
        var data: [String: Any] = [
            "from": people[Int(random.next() % 3)], "unread": random.next() % 2 == 0, "n": Int(random.next() % 100),
            "subject": subjects[Int(random.next() % UInt64(subjects.count))],
        ]
        if random.next() % 4 == 0 { data["flag"] = true }
        let children = random.next() % 5 == 0 ? ["\(id)-c"] : []
        return ModelItem(id: id, type: random.next() % 6 == 0 ? "note" : "message", data: data, children: children)
    }

    static func json(_ item: ModelItem) -> [String: Any] {
        var object: [String: Any] = ["id": item.id, "type": item.type, "data": item.data]
        if !item.children.isEmpty { object["children"] = item.children.map { ["id": $0, "type": "reply"] } }
        return object
    }

    static func document(_ sections: [ModelSection]) -> [String: Any] {
        [
            "sections": sections.map {
                ["id": $0.id, "header": ["type": "h", "data": $0.id], "items": $0.items.map(json)]
            }
        ]
    }

    /// The view the model expects: the matching top-level items, in sections that hold one.
    static func expected(_ sections: [ModelSection], _ filter: Case) -> [(section: String, ids: [String])] {
        sections.compactMap { section in
            let ids = section.items.filter(filter.matches).map(\.id)
            return ids.isEmpty ? nil : (section.id, ids)
        }
    }

    /// 1 to 3 random ops, applied to the model as the service must: inserts, removes, updates that flip items in
    /// and out of filters, moves across sections, a section's header.
    static func randomOps(_ sections: inout [ModelSection], counter: inout Int, random: inout SeededGenerator)
        -> [[String: Any]]
    {
        var ops: [[String: Any]] = []
        for _ in 0..<(1 + Int(random.next() % 3)) {
            counter += 1
            let all = sections.enumerated().flatMap { index, section in section.items.map { (index, $0.id) } }
            let pick = all.isEmpty ? nil : all[Int(random.next() % UInt64(all.count))]
            switch (random.next() % 6, pick) {
            case (0, _), (_, nil):
                let target = Int(random.next() % UInt64(sections.count))
                let item = randomItem("w\(counter)", random: &random)
                if let anchor = sections[target].items.first?.id, random.next() % 2 == 0 {
                    sections[target].items.insert(item, at: 1)
                    ops.append([
                        "op": "insertItems", "section": sections[target].id, "items": [json(item)], "after": anchor,
                    ])
                } else {
                    sections[target].items.append(item)
                    ops.append(["op": "insertItems", "section": sections[target].id, "items": [json(item)]])
                }
            case (1, let (section, id)?):
                sections[section].items.removeAll { $0.id == id }
                ops.append(["op": "removeItems", "ids": [id]])
            case (2, let (section, id)?), (3, let (section, id)?):
                let index = sections[section].items.firstIndex { $0.id == id }!
                var item = sections[section].items[index]
                item.data["unread"] = !(item.data["unread"] as? Bool ?? false)
                item.data["from"] = people[Int(random.next() % 3)]
                item.data["n"] = Int(random.next() % 100)
                if random.next() % 3 == 0 { item.data["flag"] = item.data["flag"] == nil ? true : nil }
                sections[section].items[index] = item
                ops.append(["op": "updateItems", "items": [["id": item.id, "type": item.type, "data": item.data]]])
            case (4, let (section, id)?):
                let item = sections[section].items.first { $0.id == id }!
                sections[section].items.removeAll { $0.id == id }
                let target = Int(random.next() % UInt64(sections.count))
                sections[target].items.append(item)
                ops.append(["op": "moveItem", "id": id, "section": sections[target].id])
            case (_, _):
                let section = Int(random.next() % UInt64(sections.count))
                ops.append([
                    "op": "updateSection", "id": sections[section].id, "header": ["type": "h", "data": "\(counter)"],
                ])
            }
        }
        return ops
    }

    @Test(
        "random writes under filtered sessions in both formats, with extends: every window is exactly the filtered list's run"
    )
    func randomWritesFiltered() throws {
        let api = try APIFixture { $0.sessions.resetShare = 1_000 }
        defer { api.stop() }
        var random = SeededGenerator(seed: 49)
        var counter = 0
        var sections = (0..<3).map { index in
            ModelSection(id: "s\(index)", items: (0..<25).map { Self.randomItem("i\(index)-\($0)", random: &random) })
        }
        try api.put("l", Self.document(sections))
        var clients: [(SessionClient, Case)] = []
        for (index, filter) in Self.cases.enumerated() {
            for format in ["batch", "sequential"] {
                let client = try SessionClient(
                    api, list: "l", options: ["limit": 4 + index % 3, "format": format, "filter": filter.json])
                clients.append((client, filter))
            }
        }
        var sectionRounds = 0
        for round in 0..<50 {
            var ops = Self.randomOps(&sections, counter: &counter, random: &random)
            if round % 12 == 5 {
                // A section comes and an empty one goes: every view is built again (a change of sections is not
                // followed item by item), and stays exact.
                let section = ModelSection(
                    id: "n\(round)", items: (0..<4).map { Self.randomItem("n\(round)-\($0)", random: &random) })
                sections.insert(section, at: 1)
                ops.append([
                    "op": "insertSections", "after": sections[0].id,
                    "sections": [
                        [
                            "id": section.id, "header": ["type": "h", "data": section.id],
                            "items": section.items.map(Self.json),
                        ]
                    ],
                ])
                if let empty = sections.firstIndex(where: { $0.items.isEmpty }) {
                    ops.append(["op": "removeSections", "ids": [sections[empty].id]])
                    sections.remove(at: empty)
                }
                sectionRounds += 1
            }
            try api.ops("l", ops)
            for (index, (client, filter)) in clients.enumerated() {
                let answer = try client.sync((round + index) % 4 == 1 ? "&extend=next&limit=3" : "")
                #expect(answer["reset"] == nil, "round \(round): a reset")
                let expected = Self.expected(sections, filter)
                let flat = expected.flatMap { $0.ids }
                let ids = client.window.itemIDs
                let start = ids.first.flatMap { flat.firstIndex(of: $0) } ?? 0
                #expect(
                    ids == Array(flat[min(start, flat.count)..<min(flat.count, start + ids.count)]),
                    "round \(round), filter \(filter.json), \(client.format)")
                let sectionsOfWindow = client.window.sections.map(\.id)
                let sectionsExpected = expected.filter { !Set($0.ids).isDisjoint(with: ids) }.map { $0.section }
                #expect(sectionsOfWindow == sectionsExpected, "round \(round)")
                #expect((answer["page"] as? [String: Any])?["total"] as? Int == flat.count, "round \(round)")
                #expect(client.window == (try api.freshWindow(ofSession: client.id)), "round \(round)")
            }
        }
        #expect(api.service.context.views.count == Self.cases.count, "one view per distinct filter, shared")
        #expect(
            api.service.context.views.buildCount == Self.cases.count * (1 + sectionRounds),
            "each built once, then followed write by write but for the changes of sections")
    }

    @Test("a filtered page and its cursors page through the view only, both ways")
    func filteredPages() throws {
        let api = try APIFixture()
        defer { api.stop() }
        var random = SeededGenerator(seed: 7)
        let sections = (0..<4).map { index in
            ModelSection(id: "s\(index)", items: (0..<30).map { Self.randomItem("i\(index)-\($0)", random: &random) })
        }
        try api.put("l", Self.document(sections))
        for filter in Self.cases {
            let text = String(
                decoding: try JSONSerialization.data(withJSONObject: filter.json, options: [.sortedKeys]), as: UTF8.self
            )
            let encoded = APIContext.percentEncoded(text)
            var collected: [String] = []
            var target = "/v1/lists/l?limit=7&filter=\(encoded)"
            var pages = 0
            while true {
                let response = try api.call("GET", target)
                try #require(response.status == 200, "\(response.text)")
                let object = try response.object()
                let window = try ClientWindow(pageSections: JSONSerialization.data(withJSONObject: object["sections"]!))
                collected += window.itemIDs
                let page = try #require(object["page"] as? [String: Any])
                #expect(page["total"] as? Int == Self.expected(sections, filter).flatMap { $0.ids }.count)
                pages += 1
                guard let next = page["next"] as? String else { break }
                // The Link header carries the filter; the body's cursor works with it too.
                #expect(response.headers["Link"]?.contains("filter=") == true)
                target = "/v1/lists/l?limit=7&filter=\(encoded)&after=\(next)"
            }
            #expect(collected == Self.expected(sections, filter).flatMap { $0.ids }, "\(filter.json)")
            // A cursor of the whole list does not page through a view.
            let whole = try api.call("GET", "/v1/lists/l?limit=7").object()
            let cursor = try #require((whole["page"] as? [String: Any])?["next"] as? String)
            let refused = try api.call("GET", "/v1/lists/l?limit=7&filter=\(encoded)&after=\(cursor)")
            #expect(refused.status == 400)
            #expect(try refused.problemSlug() == "invalid-cursor")
        }
    }

    @Test("every refusal of the grammar is 400 invalid-filter naming the part, and creates nothing")
    func refusals() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3))
        let bad: [Any] = [
            "unread", ["field": "data.unread"], ["field": "data.unread", "eq": true, "ne": false],
            ["field": "body", "eq": 1], ["field": "data.", "eq": 1], ["field": "data.x", "in": []],
            ["field": "data.x", "in": Array(0...100)], ["field": "data.x", "contains": ""],
            ["field": "data.x", "contains": String(repeating: "a", count: 65)], ["field": "data.x", "exists": "yes"],
            ["field": "data.x", "lt": true], ["field": "data.x", "eq": ["a": 1]], ["all": []], ["any": "x"],
            ["not": ["not": ["not": ["not": ["not": ["field": "id", "eq": "a"]]]]]],
            ["all": (0..<33).map { ["field": "id", "eq": "i\($0)"] }], ["field": "id", "eq": "a", "extra": 1],
        ]
        for filter in bad {
            let response = try api.call("POST", "/v1/lists/l/sessions", json: ["filter": filter])
            #expect(response.status == 400, "\(filter)")
            #expect(try response.problemSlug() == "invalid-filter", "\(filter)")
            #expect((try response.object()["detail"] as? String)?.isEmpty == false)
        }
        let page = try api.call("GET", "/v1/lists/l?filter=%7Bnope")
        #expect(page.status == 400)
        #expect(try page.problemSlug() == "invalid-filter")
        #expect(api.service.context.sessions.count == 0)
        #expect(api.service.context.views.count == 0)
    }

    @Test("a long poll and an event stream on a filter wake when an item is updated into it, and not for others")
    func pushOnViews() throws {
        let api = try APIFixture()
        defer { api.stop() }
        let items: [[String: Any]] = (0..<6).map {
            ["id": "m\($0)", "type": "message", "data": ["unread": $0 == 0 || $0 == 3]]
        }
        try api.put("l", ["sections": [["id": "s", "items": items]]])
        let unread: [String: Any] = ["field": "data.unread", "eq": true]
        let polled = try SessionClient(api, list: "l", options: ["filter": unread])
        let streamed = try SessionClient(api, list: "l", options: ["filter": unread, "format": "sequential"])
        #expect(polled.window.itemIDs == ["m0", "m3"])
        let reader = try EventStreamReader(port: api.server.port, target: "/v1/sessions/\(streamed.id)/events")
        defer { reader.close() }
        try reader.readHead()
        #expect(reader.status == 200)
        // A write outside the filter wakes nobody: the long poll runs to its deadline with nothing.
        try api.ops(
            "l",
            [["op": "updateItems", "items": [["id": "m4", "type": "message", "data": ["unread": false, "x": 1]]]]])
        let quiet = try api.call("GET", "/v1/sessions/\(polled.id)/changes?since=\(polled.version)&wait=0.5")
        #expect(try quiet.object()["version"] as? Int == polled.version, "\(quiet.text)")
        // m2 is updated into the filter while the long poll waits: an insert inside both windows.
        let writer = DetachedThread.startJoinable {
            sleep(milliseconds: 300)
            _ = try? api.ops(
                "l", [["op": "updateItems", "items": [["id": "m2", "type": "message", "data": ["unread": true]]]]])
        }
        let answer = try polled.sync("&wait=10")
        writer.join()
        #expect((answer["changes"] as? [String: Any])?["insertItems"] != nil, "\(answer)")
        #expect(polled.window.itemIDs == ["m0", "m2", "m3"], "\(answer)")
        let events = reader.waitForEvents(1, seconds: 10)
        #expect(events.count >= 1)
        #expect(events.first?.data.contains("m2") == true)
    }

    @Test("a session on a filter stays exact when its list is deleted and streams end; views nobody holds leave")
    func viewLifecycle() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 2, items: 5))
        let client = try SessionClient(api, list: "l", options: ["filter": ["field": "id", "in": ["s0-1", "s1-3"]]])
        #expect(client.window.itemIDs == ["s0-1", "s1-3"])
        #expect(api.service.registry.pins.isPinned("l"), "a filtered session pins its list")
        #expect(try api.call("DELETE", "/v1/lists/l").status == 204)
        #expect(try api.call("GET", "/v1/sessions/\(client.id)/changes?since=\(client.version)").status == 404)
        #expect(api.service.context.views.count == 0)
        #expect(!api.service.registry.pins.isPinned("l"))
    }
}
