import QuireCore

/// The `demo` list that `make run` serves: a chat-like inbox of five sections with headers and
/// footers, about 200 items, some threads with children; and, with `demo.live`, a change every few
/// seconds so that a long poll can be watched from curl.
///
/// Messages carry `from`, `text` and `unread` (a boolean), threads `title` and `unread` (a count): what the
/// demo page's filters read ("Unread", "From Ada", the search box; openapi.yaml).
enum DemoData {
    static let listName = "demo"

    /// Creates the demo list unless a list of that name exists (a stored one is kept as it is).
    static func seedIfMissing(_ registry: ListRegistry) throws {
        guard try registry.loadedVersion(of: listName) == nil else { return }
        // Every instance sharing a store seeds at start: the first commits, the others find the list.
        _ = try registry.write(listName) { previous throws(ListRegistry.WriteError) -> ListWrite? in
            previous == nil ? .replace(document()) : nil
        }
    }

    /// The seeded document: deterministic, so every fresh start shows the same list.
    static func document() -> JSONValue {
        let days = ["Today", "Yesterday", "This week", "Last week", "Earlier"]
        let people = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken"]
        var random = SeededGenerator(seed: 7)
        var sections: [JSONValue] = []
        var number = 0
        for (dayIndex, day) in days.enumerated() {
            var items: [JSONValue] = []
            for _ in 0..<40 {
                number += 1
                let from = people[Int(random.next() % UInt64(people.count))]
                if number % 9 == 0 {
                    let replies: [JSONValue] = (1...3).map { reply in
                        message(
                            id: "m-\(number)-\(reply)", from: people[(number + reply) % people.count],
                            text: "Reply \(reply)")
                    }
                    items.append([
                        "id": .string("t-\(number)"), "type": "thread",
                        "data": ["title": .string("Thread \(number) with \(from)"), "unread": .int(Int64(number % 4))],
                        "children": .array(replies),
                    ])
                } else {
                    items.append(
                        message(
                            id: "m-\(number)", from: from, text: "Message \(number) from \(from)",
                            unread: number % 5 < 2))
                }
            }
            sections.append([
                "id": .string("day-\(dayIndex)"),
                "header": ["type": "day-header", "data": ["title": .string(day)]],
                "footer": dayIndex == days.count - 1 ? ["type": "load-more", "data": nil] : nil,
                "items": .array(items),
            ])
        }
        return ["sections": .array(sections)]
    }

    /// One live change of the demo list: a new message on top, an item updated, every other time a message
    /// moved, the oldest live message removed.
    static func liveChange(_ registry: ListRegistry, tick: Int) throws {
        _ = try registry.write(listName, mustExist: true) { previous throws(ListRegistry.WriteError) -> ListWrite? in
            guard let previous else { throw .listNotFound }
            let newest = "live-\(previous.version)-\(tick)"
            // Newest first: above the previous live message (when no other write came between), else above m-1.
            let last = "live-\(previous.version - 1)-\(tick - 1)"
            let top = previous.containsItem(last) ? last : previous.containsItem("m-1") ? "m-1" : nil
            var ops: [JSONValue] = [
                [
                    "op": "insertItems", "section": "day-0",
                    "items": [message(id: newest, from: "Quire", text: "Live message \(tick)", unread: true)],
                    "before": top.map(JSONValue.string) ?? .null,
                ],
                // Read, then unread again: m-2 leaves a filtered session of the unread items and comes back.
                [
                    "op": "updateItems",
                    "items": [
                        message(id: "m-2", from: "Grace", text: "Edited at tick \(tick)", unread: tick % 2 == 0)
                    ],
                ],
            ]
            // Every other tick a seeded message of "Today" moves a few rows (a move to watch on /demo).
            let moving = "m-\(3 + (tick * 7) % 30)"
            let anchor = "m-\(3 + (tick * 13 + 5) % 30)"
            if tick % 2 == 0, moving != anchor, previous.containsItem(moving), previous.containsItem(anchor) {
                ops.append(["op": "moveItem", "id": .string(moving), "section": "day-0", "after": .string(anchor)])
            }
            if tick > 3, previous.containsItem("live-\(previous.version - 3)-\(tick - 3)") {
                ops.append(["op": "removeItems", "ids": [.string("live-\(previous.version - 3)-\(tick - 3)")]])
            }
            // A visitor of /demo may have removed or moved what an op names: that op is left out, not the change.
            var batch = ops.map(removingNullAnchors)
            while true {
                do throws(OpError) {
                    _ = try previous.applying(opsDocument: ["ops": .array(batch)])
                    return .ops(["ops": .array(batch)])
                } catch {
                    guard let index = error.opIndex, batch.count > 1, batch.indices.contains(index) else {
                        throw .invalidOp(error)
                    }
                    batch.remove(at: index)
                }
            }
        }
    }

    private static func message(id: String, from: String, text: String, unread: Bool = false) -> JSONValue {
        [
            "id": .string(id), "type": "message",
            "data": ["from": .string(from), "text": .string(text), "unread": .bool(unread)],
        ]
    }

    /// Drops `"before": null` so that the op inserts at the end of the section instead.
    private static func removingNullAnchors(_ op: JSONValue) -> JSONValue {
        guard case .object(var members) = op else { return op }
        if members["before"] == .null { members["before"] = nil }
        return .object(members)
    }
}
