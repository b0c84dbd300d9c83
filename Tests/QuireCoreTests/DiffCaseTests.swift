import Foundation
import QuireClient
import QuireCore
import Testing

@Suite("Diff named cases")
struct DiffCaseTests {
    /// Diffs `old` to `new` (whole windows), checks both formats on the client, returns the batch.
    @discardableResult
    func check(_ old: ListVersion, _ new: ListVersion, expanded: Set<String> = [], newExpanded: Set<String>? = nil)
        throws -> (WindowChanges, BatchChanges)
    {
        let oldWindow = old.window(range: 0..<Int.max, expanded: expanded)
        let newWindow = new.window(range: 0..<Int.max, expanded: newExpanded ?? expanded)
        let changes = oldWindow.changes(to: newWindow)
        let expected = try newWindow.clientWindow()
        var client = try oldWindow.clientWindow()
        try client.apply(batch: changes.batchJSON)
        #expect(client == expected)
        client = try oldWindow.clientWindow()
        try client.apply(sequential: changes.sequentialJSON)
        #expect(client == expected)
        return (changes, try BatchChanges(data: changes.batchJSON))
    }

    @Test func emptyToFullAndBack() throws {
        let empty = try makeVersion([])
        let full = try empty.replacing(with: makeVersion([("s", ["a", "b"]), ("t", ["c"])]).documentJSON())
        let (grow, growBatch) = try check(empty, full)
        #expect(growBatch.insertSections.map(\.index) == [0, 1] && growBatch.insertItems.isEmpty)
        #expect(grow.operationCount == 5)
        let emptied = try full.replacing(with: JSONParser().parse(#"{"sections":[]}"#))
        let (_, shrink) = try check(full, emptied)
        #expect(shrink.deleteSections == [0, 1] && shrink.deleteItems.isEmpty && shrink.counts.isEmpty)
    }

    @Test func reversedAndSwapped() throws {
        let ids = (0..<20).map { "i\($0)" }
        let old = try makeVersion([("s", ids)])
        let (reversed, _) = try check(old, try old.replacing(with: makeVersion([("s", ids.reversed())]).documentJSON()))
        #expect(reversed.movedItemCount == 19)
        var swappedIDs = ids
        swappedIDs.swapAt(3, 11)
        let (swapped, batch) = try check(old, try old.replacing(with: makeVersion([("s", swappedIDs)]).documentJSON()))
        #expect(swapped.movedItemCount == 2 && batch.deleteItems.isEmpty && batch.insertItems.isEmpty)
        var neighbours = ids
        neighbours.swapAt(4, 5)
        let (adjacent, _) = try check(old, try old.replacing(with: makeVersion([("s", neighbours)]).documentJSON()))
        #expect(adjacent.movedItemCount == 1)
    }

    /// The first of 100,000 items moved to the end is exactly one move.
    @Test func firstOfAHundredThousandMovedToTheEnd() throws {
        let old = try makeVersion([("s", (0..<100_000).map { "i\($0)" })])
        let new = try applying(old, #"{"op":"moveItem","id":"i0","section":"s"}"#)
        let changes = old.window(range: 0..<100_000).changes(to: new.window(range: 0..<100_000))
        #expect(changes.movedItemCount == 1)
        #expect(changes.operationCount == 1)
        let batch = try BatchChanges(data: changes.batchJSON)
        #expect(batch.moveItems == [BatchChanges.ItemMove(from: [0, 0], to: [0, 99_999])])
        #expect(
            String(decoding: changes.sequentialJSON, as: UTF8.self)
                == #"[{"op":"moveItem","from":[0,0],"to":[0,99999],"id":"i0"}]"#)
    }

    @Test func movesAcrossSectionsAndUpdatesAtAfterIndexes() throws {
        let old = try makeVersion([("s", ["a", "b", "c"]), ("t", ["d"])])
        let new = try applying(
            old,
            #"{"op":"moveItem","id":"a","after":"d"},{"op":"updateItems","items":[{"id":"a","type":"u"},{"id":"c","type":"u"}]}"#
        )
        let (_, batch) = try check(old, new)
        #expect(batch.moveItems == [BatchChanges.ItemMove(from: [0, 0], to: [1, 1])])
        #expect(Set(batch.updateItems.map(\.at)) == [[1, 1], [0, 1]])
        #expect(batch.counts == [2, 2])
    }

    @Test func aMovedSectionWithItemChangesIsDeletedAndInserted() throws {
        let old = try makeVersion([("s", ["a"]), ("t", ["b"]), ("u", ["c"])])
        let moved = try applying(old, #"{"op":"moveSection","id":"s"}"#)
        let (_, plain) = try check(old, moved)
        #expect(plain.moveSections.count == 1 && plain.deleteSections.isEmpty)
        let movedAndChanged = try applying(
            moved, #"{"op":"insertItems","section":"s","items":[{"id":"x","type":"t"}]}"#)
        let (_, converted) = try check(old, movedAndChanged)
        #expect(
            converted.moveSections.isEmpty && converted.deleteSections == [0]
                && converted.insertSections.map(\.index) == [2])
        #expect(converted.insertItems.isEmpty)
    }

    @Test func headerChangesAreSectionUpdates() throws {
        let old = try makeVersion([("s", ["a"])])
        let new = try applying(old, #"{"op":"updateSection","id":"s","header":{"type":"h"}}"#)
        let (changes, batch) = try check(old, new)
        #expect(batch.updateSections.map(\.index) == [0] && changes.operationCount == 1)
    }

    @Test func expandAndCollapseAreInsertsAndDeletes() throws {
        let version = try makeVersion([("s", ["a", "p>c1,c2", "b"])])
        let (expand, batch) = try check(version, version, expanded: [], newExpanded: ["p"])
        #expect(batch.insertItems.map(\.at) == [[0, 2], [0, 3]] && batch.updateItems.isEmpty)
        #expect(expand.operationCount == 2)
        let (_, collapse) = try check(version, version, expanded: ["p"], newExpanded: [])
        #expect(collapse.deleteItems == [[0, 2], [0, 3]])
    }

    @Test func resetWhenTheChangeOutweighsTheWindow() throws {
        let old = try makeVersion([("s", (0..<10).map { "i\($0)" })])
        let small = try applying(old, #"{"op":"removeItems","ids":["i0"]}"#)
        let large = try applying(old, #"{"op":"removeItems","ids":["i0","i1","i2","i3","i4","i5","i6"]}"#)
        #expect(!old.firstPage(limit: 10).changes(to: small.firstPage(limit: 10)).exceeds(share: 0.5))
        #expect(old.firstPage(limit: 10).changes(to: large.firstPage(limit: 10)).exceeds(share: 0.5))
        #expect(old.firstPage(limit: 10).changes(to: old.firstPage(limit: 10)).isEmpty)
    }
}

extension ListVersion {
    func documentJSON() throws -> JSONValue { try JSONParser().parse(documentBytes) }
}

@Suite("Diff across lineages")
struct LineageTests {
    @Test func aRecreatedListReplacesEverySection() throws {
        let old = try makeVersion([("s", ["a", "b"])])
        let recreated = try makeVersion([("s", ["b", "a"])])
        let changes = old.firstPage(limit: 10).changes(to: recreated.firstPage(limit: 10))
        #expect(changes.deletedSectionCount == 1 && changes.insertedSectionCount == 1 && changes.movedItemCount == 0)
        var client = try old.firstPage(limit: 10).clientWindow()
        try client.apply(batch: changes.batchJSON)
        #expect(client == (try recreated.firstPage(limit: 10).clientWindow()))
    }
}
