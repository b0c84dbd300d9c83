import Foundation
import QuireClient
import Testing

@testable import QuireCore

/// The incremental diff (from the change log) against the full window diff: the same window, the same
/// bytes in both formats, and a client that applies them ends exactly at a fresh cut of the window.
@Suite("Incremental diff")
struct IncrementalDiffTests {
    struct Totals {
        var answers = 0
        var incremental = 0
        var resets = 0
        var trimmed = 0
        var multiVersion = 0
    }

    /// 2,500 seeded cases in 4 parts of 625, which run in parallel.
    @Test(arguments: 0..<4)
    func randomSessionsMatchTheFullDiff(part: Int) throws {
        let baseSeed = UInt64(ProcessInfo.processInfo.environment["QUIRE_SEED"] ?? "") ?? 0x1AC0_0001
        var totals = Totals()
        for caseNumber in (part * 625)..<((part + 1) * 625) {
            try checkSession(seed: baseSeed &+ UInt64(caseNumber), totals: &totals)
        }
        // The cases must exercise the incremental path a lot, and the fallbacks and bounds too (each part about a
        // quarter of: 13,395 answers, 12,566 incremental, 2,772 resets, 4,178 trimmed, 3,475 multi-version).
        print("incremental-diff totals, part \(part):", totals)
        #expect(totals.answers > 2_500)
        #expect(totals.incremental * 10 > totals.answers * 9, "incremental \(totals.incremental) of \(totals.answers)")
        #expect(totals.resets > 25 && totals.trimmed > 125 && totals.multiVersion > 250)
    }

    @Test("items of a removed section inserted again in a new section stay in the window, on both paths")
    func itemsMovedThroughANewSection() throws {
        let first = try ListVersion(
            document: [
                "sections": [
                    ["id": "new", "items": [item("n1"), item("n2")]],
                    ["id": "today", "items": [item("a"), item("b")]],
                    ["id": "older", "items": [item("c"), item("d"), item("e")]],
                ]
            ])
        let window = try #require(first.page(around: "b", limit: 3))
        #expect(window.itemIDs == ["a", "b", "c"])
        let session = Session(
            id: "s", list: "l", format: .batch, limit: 3, window: SessionWindow(window, of: first), bound: .none)
        // A day's rollover: its section goes, its items come back under another.
        let latest = try first.applying(opsDocument: [
            "ops": [
                ["op": "removeSections", "ids": ["today"]],
                [
                    "op": "insertSections", "before": "older",
                    "sections": [["id": "yesterday", "items": [item("a"), item("b")]]],
                ],
            ]
        ])
        let incremental = try session.answer(since: 1, latest: latest, change: .update, resetShare: 0.5)
        let full = try session.answer(since: 1, latest: latest, change: .update, resetShare: 0.5, incremental: false)
        #expect(full.window.window.itemIDs == ["a", "b", "c"])
        #expect(incremental.window.range == full.window.range)
        #expect(incremental.window.window.itemIDs == ["a", "b", "c"])
    }

    @Test("a session opened on an empty list shows the first items written to it, up to its page, on both paths")
    func emptyWindowFills() throws {
        let empty = try ListVersion(document: ["sections": [["id": "s", "items": []]]])
        let window = empty.firstPage(limit: 3)
        #expect(window.count == 0)
        var session = Session(
            id: "s", list: "l", format: .batch, limit: 3, window: SessionWindow(window, of: empty), bound: .none)
        let latest = try empty.applying(opsDocument: [
            "ops": [["op": "insertItems", "section": "s", "items": [item("a"), item("b"), item("c"), item("d")]]]
        ])
        let incremental = try session.answer(since: 1, latest: latest, change: .update, resetShare: 0.5)
        let full = try session.answer(since: 1, latest: latest, change: .update, resetShare: 0.5, incremental: false)
        #expect(full.window.window.itemIDs == ["a", "b", "c"])
        #expect(incremental.window.range == full.window.range)
        #expect(incremental.window.window.itemIDs == ["a", "b", "c"])
        #expect(incremental.window.hasNext)
        // Once it holds items, the window follows them as any other: the next insert at the end stays out.
        session = incremental.session
        let later = try latest.applying(opsDocument: [
            "ops": [["op": "insertItems", "section": "s", "items": [item("e")]]]
        ])
        let next = try session.answer(since: 2, latest: later, change: .update, resetShare: 0.5)
        #expect(next.window.window.itemIDs == ["a", "b", "c"])
    }

    @Test(
        "an end item moved far away leaves the window instead of stretching it, on both paths; a neighbour moved in stays"
    )
    func movedAwayLeavesTheWindow() throws {
        let first = try ListVersion(document: [
            "sections": [["id": "s", "items": .array((0..<200).map { item("i\($0)") })]]
        ])
        func answer(_ window: Window, _ ops: JSONValue) throws -> (incremental: Window, full: Window) {
            let session = Session(
                id: "s", list: "l", format: .batch, limit: 20, window: SessionWindow(window, of: first), bound: .none)
            let latest = try first.applying(opsDocument: ["ops": ops])
            let incremental = try session.answer(since: 1, latest: latest, change: .update, resetShare: 0.5)
            let full = try session.answer(
                since: 1, latest: latest, change: .update, resetShare: 0.5, incremental: false)
            #expect(incremental.window.range == full.window.range)
            return (incremental.window.window, full.window.window)
        }
        let head = first.window(range: 0..<20)
        let scrolled = first.window(range: 100..<120)
        // The last item of the first page moved to the list's end: the window ends before it.
        var (got, expected) = try answer(head, [["op": "moveItem", "id": "i19", "section": "s"]])
        #expect(expected.itemIDs == (0..<19).map { "i\($0)" })
        #expect(got.itemIDs == expected.itemIDs)
        // The first item of a window further down moved to the top: the window starts after it.
        (got, expected) = try answer(scrolled, [["op": "moveItem", "id": "i100", "section": "s", "before": "i0"]])
        #expect(expected.itemIDs == (101..<120).map { "i\($0)" })
        #expect(got.itemIDs == expected.itemIDs)
        // The item after the window moved into it, before its last item: the window keeps all of its items.
        (got, expected) = try answer(head, [["op": "moveItem", "id": "i20", "section": "s", "before": "i19"]])
        #expect(expected.itemIDs == (0..<19).map { "i\($0)" } + ["i20", "i19"])
        #expect(got.itemIDs == expected.itemIDs)
        // Items inserted after the window's last item stay out of it; before it, they are in.
        (got, expected) = try answer(
            head, [["op": "insertItems", "section": "s", "after": "i18", "items": [item("x"), item("y")]]])
        #expect(expected.itemIDs == (0..<19).map { "i\($0)" } + ["x", "y", "i19"])
        #expect(got.itemIDs == expected.itemIDs)
    }

    /// An item of type `t`, as a list document or an op names it.
    private func item(_ id: String) -> JSONValue { ["id": .string(id), "type": "t"] }

    private func checkSession(seed: UInt64, totals: inout Totals) throws {
        var generator = RandomLists(seed: seed)
        var list = generator.list()
        if generator.chance(40) {
            // Longer lists, so that windows hold long untouched runs.
            for _ in 0..<Int.random(in: 20...120, using: &generator.random) {
                if list.sections.isEmpty { list.sections.append(TestSection(id: generator.freshID("s"))) }
                let s = Int.random(in: 0..<list.sections.count, using: &generator.random)
                list.sections[s].items.append(generator.item())
            }
        }
        var latest = try list.version()
        let expanded = generator.expanded(list)
        let range = generator.range(total: latest.visibleCount(expanded: expanded))
        let format: ChangeFormat = generator.chance(50) ? .batch : .sequential
        let bound = WindowBound(keep: generator.chance(40) ? Int.random(in: 3...25, using: &generator.random) : 0)
        let first = latest.window(
            range: range.lowerBound..<min(range.upperBound, range.lowerBound + max(bound.keep, 1_000)),
            expanded: expanded)
        var session = Session(
            id: "s", list: "l", format: format, limit: 4, window: SessionWindow(first, of: latest), bound: bound)
        // What the client holds: the window it was shown, then each answer applied to it (decoding a window
        // through the generated types is most of this test's time, so each is decoded once).
        var held = try first.clientWindow()
        for _ in 0..<Int.random(in: 4...10, using: &generator.random) {
            var versionsBehind = 0
            while generator.chance(45) {
                let (body, next) = generator.opsBatch(on: list)
                latest = try latest.applying(opsDocument: body)
                list = next
                versionsBehind += 1
            }
            let change: SessionChange
            switch Int.random(in: 0..<10, using: &generator.random) {
            case 0..<3: change = .extendNext(Int.random(in: 1...6, using: &generator.random))
            case 3..<5: change = .extendPrevious(Int.random(in: 1...6, using: &generator.random))
            case 5:
                guard let id = list.parentIDs.randomElement(using: &generator.random) else { continue }
                change = generator.chance(50) ? .expand(id) : .collapse(id)
            default: change = .update
            }
            let since = session.current.version.version
            let incremental = try session.answer(since: since, latest: latest, change: change, resetShare: 0.5)
            let full = try session.answer(
                since: since, latest: latest, change: change, resetShare: 0.5, incremental: false)
            let context = "seed \(seed), \(change), \(versionsBehind) versions behind"
            #expect(incremental.window.range == full.window.range, "\(context): windows differ")
            #expect(incremental.window.sectionCounts == full.window.sectionCounts, "\(context): counts differ")
            #expect(incremental.window.total == full.window.total, "\(context): totals differ")
            for format in ChangeFormat.allCases {
                let got = Self.bytes(incremental, format)
                let expected = Self.bytes(full, format)
                #expect(
                    got == expected,
                    "\(context), \(format):\n\(String(decoding: got, as: UTF8.self))\nexpected\n\(String(decoding: expected, as: UTF8.self))"
                )
                if got != expected { return }
            }
            held = try checkClient(holding: held, answer: incremental, latest: latest, context: context)
            if case .unchanged = incremental.content {
            } else {
                totals.answers += 1
                if incremental.isIncremental { totals.incremental += 1 }
            }
            if case .reset = incremental.content { totals.resets += 1 }
            if session.bound.keep > 0 && incremental.window.range.count == session.bound.keep { totals.trimmed += 1 }
            if versionsBehind > 1 { totals.multiVersion += 1 }
            #expect(
                session.bound.keep == 0
                    || incremental.window.range.count <= max(session.bound.keep, session.current.range.count),
                "\(context): window past its bound")
            session = incremental.session
        }
    }

    /// The client holding the session's window (`held`) applies the answer and holds the new window exactly:
    /// a fresh cut of the answer's range, which it holds from then on.
    private func checkClient(holding held: ClientWindow, answer: SessionAnswer, latest: ListVersion, context: String)
        throws -> ClientWindow
    {
        let expected = try latest.window(range: answer.window.range, expanded: answer.window.expanded).clientWindow()
        switch answer.content {
        case .changes(let changes):
            var batch = held
            try batch.apply(batch: Data(Self.encoded(changes, .batch)))
            #expect(batch == expected, "\(context): batch result differs")
            var sequential = held
            try sequential.apply(sequential: Data(Self.encoded(changes, .sequential)))
            #expect(sequential == expected, "\(context): sequential result differs")
        case .reset(let window):
            #expect(try window.clientWindow() == expected, "\(context): reset differs")
        case .unchanged:
            #expect(held == expected, "\(context): unchanged differs")
        }
        return expected
    }

    private static func encoded(_ changes: SessionChanges, _ format: ChangeFormat) -> [UInt8] {
        var out: [UInt8] = []
        switch format {
        case .batch: changes.encodeBatch(into: &out)
        case .sequential: changes.encodeSequential(into: &out)
        }
        return out
    }

    private static func bytes(_ answer: SessionAnswer, _ format: ChangeFormat) -> [UInt8] {
        switch answer.content {
        case .changes(let changes): return encoded(changes, format)
        case .reset(let window):
            var out: [UInt8] = Array("reset:".utf8)
            window.encodeSections(into: &out)
            return out
        case .unchanged(let window): return Array("unchanged:\(window.range)".utf8)
        }
    }
}
