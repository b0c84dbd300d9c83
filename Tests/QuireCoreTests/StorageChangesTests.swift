import Foundation
import QuireCore
import Testing

/// A row store in memory with the SQL store's rules (unique position per container, anchors that must
/// exist): applying ``StorageChanges`` to it and restoring must give back the version exactly.
struct RowModel {
    struct ItemRow {
        var container: StorageChanges.Container
        var position: [UInt8]
        var body: [UInt8]
    }

    var sections: [String: (position: [UInt8], section: StorageChanges.Section)] = [:]
    var items: [String: ItemRow] = [:]
    var version: UInt64 = 0

    mutating func apply(_ changes: StorageChanges, version: UInt64) throws {
        self.version = version
        for id in changes.removedSections { try #require(sections.removeValue(forKey: id) != nil) }
        for id in changes.removedItems { try #require(items.removeValue(forKey: id) != nil, "removed \(id)") }
        for id in changes.movedItems { try #require(items.removeValue(forKey: id) != nil, "moved \(id)") }
        for run in changes.placedSections {
            let low = try run.after.map { try #require(sections[$0]?.position) }
            let high = try run.before.map { try #require(sections[$0]?.position) }
            let positions = StoragePosition.between(low, high, count: run.sections.count)
            for (section, position) in zip(run.sections, positions) { sections[section.id] = (position, section) }
        }
        for section in changes.updatedSections {
            try #require(sections[section.id] != nil)
            sections[section.id]!.section = section
        }
        for run in changes.placedItems {
            let low = try run.after.map { try #require(items[$0]?.position, "anchor \($0)") }
            let high = try run.before.map { try #require(items[$0]?.position, "anchor \($0)") }
            if let low, let high { try #require(low.lexicographicallyPrecedes(high)) }
            let positions = StoragePosition.between(low, high, count: run.items.count)
            let taken = Set(items.values.filter { $0.container == run.container }.map(\.position))
            for (item, position) in zip(run.items, positions) {
                try #require(!taken.contains(position), "position collision")
                try #require(items[item.id] == nil, "inserted twice: \(item.id)")
                items[item.id] = ItemRow(container: run.container, position: position, body: item.body)
            }
        }
        for item in changes.updatedItems {
            try #require(items[item.id] != nil)
            items[item.id]!.body = item.body
        }
    }

    func restore(limits: ListLimits = ListLimits()) throws -> ListVersion {
        let orderedSections = sections.values.sorted { $0.position.lexicographicallyPrecedes($1.position) }
        var grouped: [StorageChanges.Container: [(position: [UInt8], item: StorageChanges.Item)]] = [:]
        for (id, row) in items {
            grouped[row.container, default: []].append((row.position, .init(id: id, body: row.body)))
        }
        return try ListVersion.restoring(
            version: version, limits: limits, sections: orderedSections.map(\.section),
            items: grouped.mapValues { rows in
                rows.sorted { $0.position.lexicographicallyPrecedes($1.position) }.map(\.item)
            })
    }
}

@Suite("storage changes")
struct StorageChangesTests {
    /// Every item id and section id of a version, from its document.
    static func ids(_ version: ListVersion) throws -> (sections: [String], items: [String]) {
        let document = try JSONParser().parse(version.documentBytes)
        var items: [String] = []
        func walk(_ list: [JSONValue]) {
            for item in list {
                items.append(item["id"]!.stringValue!)
                walk(item["children"]?.arrayValue ?? [])
            }
        }
        let sections = document["sections"]!.arrayValue!
        for section in sections { walk(section["items"]!.arrayValue!) }
        return (sections.map { $0["id"]!.stringValue! }, items)
    }

    /// The next version of a random walk from `current`: the list edited and replaced (always first, then three
    /// times in ten), else a random batch of ops (`byOps`); `nil` when the ops drawn were none or refused.
    static func randomNext(
        of current: ListVersion?, _ testList: inout TestList, _ lists: inout RandomLists
    ) throws -> (version: ListVersion, byOps: Bool)? {
        guard let current, !lists.chance(30) else {
            testList = lists.edit(testList)
            return (try current?.replacing(with: testList.json) ?? testList.version(), false)
        }
        let ops = try randomOps(current, &lists)
        guard !ops.isEmpty, let applied = try? applying(current, ops) else { return nil }
        return (applied, true)
    }

    /// A random batch of ops on `version` (some may fail; the caller skips those).
    static func randomOps(_ version: ListVersion, _ lists: inout RandomLists) throws -> String {
        let (sections, items) = try ids(version)
        func pick(_ ids: [String]) -> String { ids[Int.random(in: 0..<ids.count, using: &lists.random)] }
        func itemJSON(_ lists: inout RandomLists) -> String {
            let item = lists.item()
            return String(decoding: JSONWriter.encode(item.json), as: UTF8.self)
        }
        var ops: [String] = []
        for _ in 0..<Int.random(in: 1...4, using: &lists.random) {
            switch Int.random(in: 0..<9, using: &lists.random) {
            case 0 where !sections.isEmpty:
                ops.append(#"{"op":"insertItems","section":"\#(pick(sections))","items":[\#(itemJSON(&lists))]}"#)
            case 1 where !items.isEmpty:
                ops.append(#"{"op":"insertItems","items":[\#(itemJSON(&lists))],"after":"\#(pick(items))"}"#)
            case 2 where !items.isEmpty:
                ops.append(#"{"op":"insertItems","parent":"\#(pick(items))","items":[\#(itemJSON(&lists))]}"#)
            case 3 where !items.isEmpty:
                ops.append(#"{"op":"removeItems","ids":["\#(pick(items))"]}"#)
            case 4 where !items.isEmpty:
                ops.append(#"{"op":"moveItem","id":"\#(pick(items))","before":"\#(pick(items))"}"#)
            case 5 where !items.isEmpty:
                let id = pick(items)
                ops.append(
                    #"{"op":"updateItems","items":[{"id":"\#(id)","type":"x","data":\#(Int.random(in: 0...9, using: &lists.random))}]}"#
                )
            case 6:
                let id = lists.freshID("s")
                ops.append(#"{"op":"insertSections","sections":[{"id":"\#(id)","items":[\#(itemJSON(&lists))]}]}"#)
            case 7 where sections.count > 1:
                ops.append(#"{"op":"moveSection","id":"\#(pick(sections))","after":"\#(pick(sections))"}"#)
            case 8 where !sections.isEmpty:
                ops.append(
                    #"{"op":"updateSection","id":"\#(pick(sections))","header":{"type":"h","data":\#(Int.random(in: 0...9, using: &lists.random))}}"#
                )
            default:
                if !sections.isEmpty, lists.chance(30) {
                    ops.append(#"{"op":"removeSections","ids":["\#(pick(sections))"]}"#)
                }
            }
        }
        return ops.joined(separator: ",")
    }

    @Test(
        "a version's footprint walked alone equals its footprint with shared nodes counted once: one version's trees share no node or buffer",
        arguments: 0..<10)
    func footprintOfOneVersion(seed: UInt64) throws {
        var lists = RandomLists(seed: seed)
        var current: ListVersion? = nil
        var testList = lists.list()
        for _ in 0..<30 {
            guard let (next, _) = try Self.randomNext(of: current, &testList, &lists) else { continue }
            // The registry walks one version alone, without the sets that find shared nodes: counted twice, a node
            // shared within the version would make it larger than the walk that counts it once.
            for version in [next, next.compacted()] {
                let alone = ListVersion.estimatedFootprint(of: [version])
                #expect(alone == ListVersion.estimatedFootprint(of: [version, version]), "seed \(seed)")
                #expect(alone > 0)
            }
            current = next
        }
    }

    @Test("applying the changes of random writes to rows and restoring gives the same list", arguments: 0..<20)
    func randomWrites(seed: UInt64) throws {
        var lists = RandomLists(seed: seed)
        var model = RowModel()
        var current: ListVersion? = nil
        var testList = lists.list()
        var opsApplied = 0
        for step in 0..<40 {
            guard let (next, byOps) = try Self.randomNext(of: current, &testList, &lists) else { continue }
            if byOps {
                opsApplied += 1
                // The walk by order, which a version made by ops may take too, gives the same rows.
                var byOrder = model
                try byOrder.apply(next.storageChanges(since: current), version: next.version)
                #expect(try byOrder.restore().documentBytes == next.documentBytes, "seed \(seed), step \(step)")
            }
            let changes = next.storageChanges(since: current, keepsLabels: byOps)
            // What a journal stores and reads back is the same changes.
            let encoded = changes.encoded()
            let decoded = try encoded.withUnsafeBufferPointer { try StorageChanges(encoded: $0) }
            #expect(decoded.encoded() == encoded, "seed \(seed), step \(step)")
            try model.apply(decoded, version: next.version)
            let restored = try model.restore()
            #expect(restored.documentBytes == next.documentBytes, "seed \(seed), step \(step)")
            #expect(restored.version == next.version)
            current = next
        }
        #expect(opsApplied > 5)
    }

    @Test("encoded changes cut short, or with bytes left over, are refused with an error")
    func damagedEncoding() throws {
        var lists = RandomLists(seed: 7)
        var testList = lists.list()
        let first = try testList.version()
        var changes = first.storageChanges(since: nil)
        if let (next, byOps) = try Self.randomNext(of: first, &testList, &lists) {
            changes = next.storageChanges(since: first, keepsLabels: byOps)
        }
        let encoded = changes.encoded()
        #expect(encoded.count > 8)
        for length in 0..<encoded.count {
            #expect(throws: StoredListError.self) {
                try Array(encoded[..<length]).withUnsafeBufferPointer { try StorageChanges(encoded: $0) }
            }
        }
        #expect(throws: StoredListError.self) {
            try (encoded + [0]).withUnsafeBufferPointer { try StorageChanges(encoded: $0) }
        }
        // A length far beyond the bytes is refused before anything is allocated for it.
        #expect(throws: StoredListError.self) {
            try [0xff, 0xff, 0xff, 0xff, 0x0f].withUnsafeBufferPointer { try StorageChanges(encoded: $0) }
        }
    }

    @Test("one item written into a 100,000-item list changes one row")
    func smallChangeWritesLittle() throws {
        var list = TestList()
        list.sections = [TestSection(id: "all", items: (0..<100_000).map { TestItem(id: "i\($0)", data: .int($0)) })]
        let big = try list.version()
        let inserted = try applying(big, #"{"op":"insertItems","items":[{"id":"new","type":"t"}],"after":"i500"}"#)
        for keepsLabels in [false, true] {
            let changes = inserted.storageChanges(since: big, keepsLabels: keepsLabels)
            #expect(changes.rowCount == 1)
            #expect(changes.placedItems.first?.after == "i500")
            #expect(changes.placedItems.first?.before == "i501")
        }
        let updated = try applying(inserted, #"{"op":"updateItems","items":[{"id":"i7","type":"t","data":1}]}"#)
        #expect(updated.storageChanges(since: inserted).rowCount == 1)
        #expect(updated.storageChanges(since: inserted, keepsLabels: true).rowCount == 1)
        let moved = try applying(updated, #"{"op":"moveItem","id":"i9","after":"i99000"}"#)
        #expect(moved.storageChanges(since: updated).rowCount == 2)
        #expect(moved.storageChanges(since: updated, keepsLabels: true).rowCount == 2)
    }

    @Test(
        "single ops that split, merge and collapse the trees' nodes write exactly their rows, and the rows restore the list",
        arguments: 0..<4)
    func singleOpsThroughEveryTreeShape(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        var list = TestList()
        list.sections = [TestSection(id: "s", items: [])]
        var current = try list.version()
        var model = RowModel()
        try model.apply(current.storageChanges(since: nil), version: current.version)
        var live: [String] = []
        var next = 0
        // Up to 600 items (trees of three levels of 16-entry nodes), then down to none: every split, every merge and
        // the root's growing and collapsing meet the walk of what two versions share.
        for step in 0..<1_700 {
            let growing = step < 900
            let op: String
            // A move to where the item already is writes nothing.
            let rows: ClosedRange<Int>
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<8 where growing || live.isEmpty:
                let id = "n\(next)"
                next += 1
                let anchor =
                    live.isEmpty || Bool.random(using: &random)
                    ? #""section":"s""# : #""after":"\#(live.randomElement(using: &random)!)""#
                op = #"{"op":"insertItems","items":[{"id":"\#(id)","type":"t","data":\#(next)}],\#(anchor)}"#
                live.append(id)
                rows = 1...1
            case 8 where live.count > 1:
                let id = live.randomElement(using: &random)!
                var anchor = id
                while anchor == id { anchor = live.randomElement(using: &random)! }
                op = #"{"op":"moveItem","id":"\#(id)","before":"\#(anchor)"}"#
                rows = 0...2
            default:
                guard !live.isEmpty else { continue }
                let id = live.remove(at: Int.random(in: 0..<live.count, using: &random))
                op = #"{"op":"removeItems","ids":["\#(id)"]}"#
                rows = 1...1
            }
            let made = try applying(current, op)
            let changes = made.storageChanges(since: current, keepsLabels: true)
            #expect(rows.contains(changes.rowCount), "seed \(seed), step \(step): \(op)")
            // The model checks every run's anchors and positions as it applies it; restoring the whole list (linear
            // in its size) is checked every tenth step.
            try model.apply(changes, version: made.version)
            if step % 10 == 0 || step == 1_699 {
                #expect(try model.restore().documentBytes == made.documentBytes, "seed \(seed), step \(step): \(op)")
            }
            current = made
        }
        #expect(live.isEmpty || current.itemCount == live.count)
    }

    @Test("a PUT that changes 1% of a list writes about 1% of the rows")
    func replacementWritesLittle() throws {
        var list = TestList()
        list.sections = [TestSection(id: "all", items: (0..<10_000).map { TestItem(id: "i\($0)", data: .int($0)) })]
        let first = try list.version()
        for index in stride(from: 0, to: 10_000, by: 200) { list.sections[0].items[index].data = .string("x") }
        for index in stride(from: 100, to: 10_000, by: 200).reversed() { list.sections[0].items.remove(at: index) }
        list.sections[0].items.insert(TestItem(id: "new"), at: 3)
        let second = try first.replacing(with: list.json)
        let changes = second.storageChanges(since: first)
        #expect(changes.rowCount == 50 + 50 + 1)
        var model = RowModel()
        try model.apply(first.storageChanges(since: nil), version: first.version)
        try model.apply(changes, version: second.version)
        #expect(try model.restore().documentBytes == second.documentBytes)
    }

    @Test("storage positions sort as bytes in label order, with room between any two")
    func positions() {
        var keys = StoragePosition.between(nil, nil, count: 3)
        for _ in 0..<200 {
            let index = keys.count / 2
            let middle = StoragePosition.between(keys[index - 1], keys[index], count: 1)[0]
            keys.insert(middle, at: index)
        }
        for index in keys.indices.dropFirst() {
            #expect(keys[index - 1].lexicographicallyPrecedes(keys[index]))
            #expect(StoragePosition.isValid(keys[index]))
        }
    }
}
