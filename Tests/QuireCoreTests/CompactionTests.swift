import Foundation
import QuireClient
import Testing

@testable import QuireCore

/// Ids that come and go (a feed): the id table is compacted, and sessions across a compaction are answered
/// by id, exactly and minimally.
@Suite("Id compaction")
struct CompactionTests {
    private func item(_ id: String) -> JSONValue {
        .object(["id": .string(id), "type": "row", "data": .object(["id": .string(id)])])
    }

    @Test("200,000 ids inserted and removed through live sessions: the table stays small, answers stay exact")
    func feedThroughSessions() throws {
        let registry = ListRegistry(store: InMemoryListStore(), limits: ListLimits(maxItems: 100_000))
        var next = 0
        func fresh(_ count: Int) -> [String] {
            defer { next += count }
            return (next..<(next + count)).map { "f\($0)" }
        }
        var live = fresh(5_000)
        _ = try registry.write("feed") { _ throws(ListRegistry.WriteError) in
            do throws(ListValidationError) {
                return try ListVersion(document: ["sections": [["id": "all", "items": .array(live.map(item))]]])
            } catch { throw .invalidList(error) }
        }
        let first = registry.version(of: "feed")!
        let formats: [ChangeFormat] = [.batch, .sequential, .batch]
        var sessions = [
            (first.firstPage(limit: 50), WindowBound(keep: 100)),
            (first.page(around: "f2500", limit: 80)!, WindowBound()),
            (first.lastPage(limit: 30), WindowBound()),
        ].enumerated().map { index, start in
            Session(
                id: "s\(index)", list: "feed", format: formats[index], limit: 20,
                window: SessionWindow(start.0, of: first), bound: start.1)
        }
        var lineages = Set([ObjectIdentifier(first.interner)])
        var answers = 0
        while next < (Int(ProcessInfo.processInfo.environment["QUIRE_COMPACTION_IDS"] ?? "") ?? 200_000) {
            // 1,000 new items at the head, the 1,000 oldest gone from the tail.
            let added = fresh(1_000)
            let removed = Array(live.suffix(1_000))
            live = added + live.dropLast(1_000)
            _ = try registry.write("feed") { current throws(ListRegistry.WriteError) in
                do throws(OpError) {
                    return try current!.applying(opsDocument: [
                        "ops": [
                            [
                                "op": "insertItems", "section": "all", "items": .array(added.map(item)),
                                "before": .string(live[1_000]),
                            ],
                            ["op": "removeItems", "ids": .array(removed.map { .string($0) })],
                        ]
                    ])
                } catch { throw .invalidOp(error) }
            }
            let latest = registry.version(of: "feed")!
            lineages.insert(ObjectIdentifier(latest.interner))
            #expect(latest.interner.count <= 2 * (latest.itemCount + latest.sectionCount) + 4_096)
            for index in sessions.indices where next % 3_000 == 0 || index == 0 {
                let session = sessions[index]
                let answer = try session.answer(
                    since: session.current.version.version, latest: latest, change: .update, resetShare: 1_000)
                guard case .changes(let changes) = answer.content else {
                    Issue.record("session \(index): not a change")
                    continue
                }
                var batch: [UInt8] = []
                changes.encodeBatch(into: &batch)
                let text = String(decoding: batch, as: UTF8.self)
                // The section survives every compaction: a replacement would delete and insert it.
                #expect(
                    text.hasPrefix(#"{"deleteSections":[],"insertSections":[]"#),
                    "session \(index): \(text.prefix(120))")
                var client = try session.current.window.clientWindow()
                switch session.format {
                case .batch: try client.apply(batch: Data(batch))
                case .sequential:
                    var sequential: [UInt8] = []
                    changes.encodeSequential(into: &sequential)
                    try client.apply(sequential: Data(sequential))
                }
                #expect(client == (try answer.window.window.clientWindow()), "session \(index) after \(next) ids")
                sessions[index] = answer.session
                answers += 1
            }
        }
        #expect(lineages.count > 10, "the table was compacted \(lineages.count - 1) times")
        #expect(answers > 250)
    }

    @Test("a compacted version is the same list: same document, same pages, same writes after it")
    func compactedIsTheSame() throws {
        var generator = RandomLists(seed: 77)
        for _ in 0..<200 {
            var list = generator.list()
            var version = try list.version()
            for _ in 0..<3 {
                let (body, after) = generator.opsBatch(on: list)
                version = try version.applying(opsDocument: body)
                list = after
            }
            let compacted = version.compacted()
            #expect(compacted.documentBytes == version.documentBytes)
            #expect(compacted.version == version.version)
            let expanded = generator.expanded(list)
            let total = version.visibleCount(expanded: expanded)
            #expect(compacted.visibleCount(expanded: expanded) == total)
            let range = generator.range(total: total)
            #expect(
                try compacted.window(range: range, expanded: expanded).clientWindow()
                    == version.window(range: range, expanded: expanded).clientWindow())
            let (body, _) = generator.opsBatch(on: list)
            let expected = try? version.applying(opsDocument: body).documentBytes
            #expect((try? compacted.applying(opsDocument: body).documentBytes) == expected)
            compacted.checkInvariants()
        }
    }
}
