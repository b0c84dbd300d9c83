import Foundation
import QuireClient
import QuireCore
import Testing

@Suite("Diff properties")
struct DiffPropertyTests {
    /// Random windows and random edits: both formats bring the client from the old window to the new one,
    /// the client's batch checks pass, and moves are minimal.
    @Test func randomEditsApplyInBothFormats() throws {
        let baseSeed = UInt64(ProcessInfo.processInfo.environment["QUIRE_SEED"] ?? "") ?? 0x5EED_0001
        var totals = Totals()
        for caseNumber in 0..<3_000 {
            let seed = baseSeed &+ UInt64(caseNumber)
            try checkCase(seed: seed, totals: &totals)
        }
        // The generator must exercise every kind of change, or the cases above prove little.
        #expect(totals.itemMoves > 300 && totals.sectionMoves > 100 && totals.sectionDeletes > 100)
        #expect(totals.itemInserts > 300 && totals.itemDeletes > 300 && totals.itemUpdates > 300)
        #expect(totals.sectionUpdates > 50 && totals.children > 300)
    }

    struct Totals {
        var itemMoves = 0, itemInserts = 0, itemDeletes = 0, itemUpdates = 0
        var sectionMoves = 0, sectionDeletes = 0, sectionUpdates = 0, children = 0
    }

    private func checkCase(seed: UInt64, totals: inout Totals) throws {
        var generator = RandomLists(seed: seed)
        let oldList = generator.list()
        let newList = generator.edit(oldList)
        let oldVersion = try oldList.version()
        let newVersion = try oldVersion.replacing(with: newList.json)
        let oldExpanded = generator.expanded(oldList)
        let newExpanded = generator.chance(50) ? oldExpanded : generator.expanded(newList)
        let oldWindow = oldVersion.window(
            range: generator.range(total: oldVersion.visibleCount(expanded: oldExpanded)), expanded: oldExpanded)
        let newWindow = newVersion.window(
            range: generator.range(total: newVersion.visibleCount(expanded: newExpanded)), expanded: newExpanded)
        let changes = oldWindow.changes(to: newWindow)
        let expected = try newWindow.clientWindow()
        totals.itemMoves += changes.movedItemCount
        totals.itemInserts += changes.insertedItemCount
        totals.itemDeletes += changes.deletedItemCount
        totals.itemUpdates += changes.updatedItemCount
        totals.sectionMoves += changes.movedSectionCount
        totals.sectionDeletes += changes.deletedSectionCount
        totals.sectionUpdates += changes.updatedSectionCount
        totals.children += newWindow.sections.reduce(0) { $0 + $1.items.filter { $0.depth > 0 }.count }

        var batchClient = try oldWindow.clientWindow()
        do {
            try batchClient.apply(batch: changes.batchJSON)
        } catch {
            Issue.record(
                "seed \(seed): batch rejected: \(error)\n\(String(decoding: changes.batchJSON, as: UTF8.self))")
            return
        }
        #expect(batchClient == expected, "seed \(seed): batch result differs")

        var sequentialClient = try oldWindow.clientWindow()
        do {
            try sequentialClient.apply(sequential: changes.sequentialJSON)
        } catch {
            Issue.record("seed \(seed): sequential rejected: \(error)")
            return
        }
        #expect(sequentialClient == expected, "seed \(seed): sequential result differs")
        #expect(
            changes.movedItemCount == minimalMoves(oldWindow, newWindow, changes), "seed \(seed): moves not minimal")
    }

    /// Moves a correct diff must make, computed independently: every item that changes surviving section,
    /// plus, per section, the items outside a longest increasing subsequence of those that stay in it.
    private func minimalMoves(_ old: Window, _ new: Window, _ changes: WindowChanges) -> Int {
        let batch = try! BatchChanges(data: changes.batchJSON)
        let deleted = Set(batch.deleteSections)
        let inserted = Set(batch.insertSections.map(\.index))
        let oldSurvivors = old.sections.indices.filter { !deleted.contains($0) }
        let newSurvivors = new.sections.indices.filter { !inserted.contains($0) }
        var oldPlace: [String: (section: String, index: Int)] = [:]
        for index in oldSurvivors {
            for (position, id) in old.sections[index].items.map(\.id).enumerated() {
                oldPlace[id] = (old.sections[index].id, position)
            }
        }
        var moves = 0
        for index in newSurvivors {
            let section = new.sections[index]
            var staying: [Int] = []
            for item in section.items {
                guard let place = oldPlace[item.id] else { continue }
                if place.section == section.id { staying.append(place.index) } else { moves += 1 }
            }
            moves += staying.count - naiveLongestIncreasingLength(staying)
        }
        return moves
    }
}
