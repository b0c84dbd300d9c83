import Testing

@testable import QuireCore

/// ``ListVersionDraft``: ops applied one at a time make the version a batch of them makes, one version later, with
/// the same change log and storage changes; an op that cannot apply refuses the draft whole.
@Suite("list version drafts")
struct ListVersionDraftTests {
    @Test("a draft of random ops is the version their batch makes: content, number, change log, storage changes")
    func sameAsBatch() throws {
        for seed in 0..<40 as Range<UInt64> {
            var generator = RandomLists(seed: seed)
            var list = generator.list()
            var base = try list.version()
            for _ in 0..<4 {
                let (body, after) = generator.opsBatch(on: list)
                let ops = try ListOp.decodeBatch(body, limits: base.limits)
                let baseBytes = base.documentBytes
                let batch = try base.applying(ops)
                var draft = ListVersionDraft(base)
                for op in ops { try draft.apply(op) }
                let made = try draft.finished()
                #expect(draft.opCount == ops.count)
                #expect(made.version == base.version + 1, "seed \(seed)")
                #expect(made.documentBytes == batch.documentBytes, "seed \(seed)")
                #expect(
                    made.changeLog.changes(since: base.version)?.items
                        == batch.changeLog.changes(
                            since: base.version)?.items, "seed \(seed)")
                #expect(
                    String(describing: made.storageChanges(since: base, keepsLabels: true))
                        == String(describing: batch.storageChanges(since: base, keepsLabels: true)), "seed \(seed)")
                made.checkInvariants()
                // The base is a value: the draft changed none of it.
                #expect(base.documentBytes == baseBytes, "seed \(seed)")
                base = made
                list = after
            }
        }
    }

    @Test("the version read between ops is the ops applied so far")
    func readsBetweenOps() throws {
        let base = try makeVersion([("s", ["a", "b"])])
        var draft = ListVersionDraft(base)
        try draft.apply(ListOp.decode(["op": "insertItems", "section": "s", "items": [["id": "c", "type": "row"]]]))
        #expect(draft.current.topLevelItemCount(inSection: "s") == 3)
        try draft.apply(ListOp.decode(["op": "removeItems", "ids": ["a"]]))
        #expect(draft.current.topLevelItemID(at: 0, inSection: "s") == "b")
        #expect(base.topLevelItemCount(inSection: "s") == 2)
        #expect(try draft.finished().version == base.version + 1)
    }

    @Test("an op that cannot apply refuses the draft: every later op and the version made")
    func refusedWhole() throws {
        let base = try makeVersion([("s", ["a"])])
        var draft = ListVersionDraft(base)
        try draft.apply(ListOp.decode(["op": "removeItems", "ids": ["a"]]))
        #expect(throws: ListValidationError.self) {
            try draft.apply(ListOp.decode(["op": "removeItems", "ids": ["x"]]))
        }
        #expect(throws: ListValidationError.self) {
            try draft.apply(
                ListOp.decode(["op": "insertItems", "section": "s", "items": [["id": "b", "type": "row"]]]))
        }
        #expect(throws: ListValidationError.self) { try draft.finished() }
        #expect(draft.opCount == 1)
    }
}
