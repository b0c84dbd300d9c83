import QuireClient

/// A collection view that checks what UIKit checks in `performBatchUpdates` (and raises
/// `NSInternalInconsistencyException` for on iOS): the number of sections and of items in every surviving
/// section after the batch must equal the count before, minus deletes and moves out, plus inserts and moves
/// in; no index used twice; indexes in range. It also rebuilds the cells from the batch, as UIKit does, and
/// requires the result to be the data source's window.
@MainActor
final class FakeCollectionView: BatchUpdatingView {
    /// The data source: the window the view shows.
    var window = ClientWindow()
    /// The cells (item ids) the view shows.
    private(set) var cells: [[String]] = []
    private(set) var violations: [String] = []
    private(set) var batches = 0
    private(set) var reloads = 0
    private var batch: Batch?

    private struct Batch {
        var deleteSections: [Int] = []
        var insertSections: [Int] = []
        var moveSections: [(Int, Int)] = []
        var deleteItems: [ItemPath] = []
        var insertItems: [ItemPath] = []
        var moveItems: [(ItemPath, ItemPath)] = []
    }

    func performBatchUpdates(_ updates: () -> Void) {
        batches += 1
        let before = cells
        batch = Batch()
        updates()
        let batch = self.batch!
        self.batch = nil
        check(batch, before: before)
    }

    func deleteSections(_ sections: [Int]) { batch!.deleteSections += sections }
    func insertSections(_ sections: [Int]) { batch!.insertSections += sections }
    func moveSection(_ section: Int, toSection: Int) { batch!.moveSections.append((section, toSection)) }
    func deleteItems(at paths: [ItemPath]) { batch!.deleteItems += paths }
    func insertItems(at paths: [ItemPath]) { batch!.insertItems += paths }
    func moveItem(at path: ItemPath, to newPath: ItemPath) { batch!.moveItems.append((path, newPath)) }

    func reconfigureItems(at paths: [ItemPath]) {
        for path in paths
        where !(cells.indices.contains(path.section) && cells[path.section].indices.contains(path.item)) {
            violations.append("reconfigure of \(path), outside the view")
        }
    }

    func reloadSupplementaryViews(inSection section: Int) {
        if !cells.indices.contains(section) { violations.append("supplementary reload of section \(section)") }
    }

    func reloadData() {
        reloads += 1
        cells = Self.ids(window)
    }

    private static func ids(_ window: ClientWindow) -> [[String]] {
        window.sections.map { $0.items.map { $0["id"]?.stringValue ?? "?" } }
    }

    private func check(_ batch: Batch, before: [[String]]) {
        let after = Self.ids(window)
        func fail(_ message: String) { violations.append(message) }
        // Sections.
        let deleted = Set(batch.deleteSections)
        let inserted = Set(batch.insertSections)
        let movedFrom = Set(batch.moveSections.map(\.0))
        let movedTo = Set(batch.moveSections.map(\.1))
        if deleted.count != batch.deleteSections.count || inserted.count != batch.insertSections.count {
            fail("a section index used twice")
        }
        if after.count != before.count - deleted.count + inserted.count {
            fail("sections: \(after.count) after, \(before.count) before, -\(deleted.count) +\(inserted.count)")
            return
        }
        if deleted.contains(where: { $0 >= before.count }) || inserted.contains(where: { $0 >= after.count }) {
            fail("a section index out of range")
            return
        }
        // Where each old section goes: moved, deleted, or in order into the remaining new slots.
        var newIndexOfOld: [Int: Int] = [:]
        for (from, to) in batch.moveSections { newIndexOfOld[from] = to }
        var freeNew = (0..<after.count).filter { !inserted.contains($0) && !movedTo.contains($0) }.makeIterator()
        for old in 0..<before.count where !deleted.contains(old) && !movedFrom.contains(old) {
            newIndexOfOld[old] = freeNew.next()
        }
        // Items: the counts rule for every surviving section, then the cells rebuilt.
        var rebuilt = after.map { [String?](repeating: nil, count: $0.count) }
        let deletedItems = Set(batch.deleteItems)
        let movedItems = Set(batch.moveItems.map(\.0))
        if deletedItems.count != batch.deleteItems.count || Set(batch.insertItems).count != batch.insertItems.count {
            fail("an item index used twice")
        }
        for (old, new) in newIndexOfOld {
            let deletes = batch.deleteItems.filter { $0.section == old }.count
            let movesOut = batch.moveItems.filter { $0.0.section == old }.count
            let inserts = batch.insertItems.filter { $0.section == new }.count
            let movesIn = batch.moveItems.filter { $0.1.section == new }.count
            if after[new].count != before[old].count - deletes - movesOut + inserts + movesIn {
                fail(
                    "section \(old)→\(new): \(after[new].count) items after, \(before[old].count) before, "
                        + "-\(deletes) -\(movesOut) moved out +\(inserts) +\(movesIn) moved in")
            }
        }
        for path in batch.insertItems {
            guard rebuilt.indices.contains(path.section), rebuilt[path.section].indices.contains(path.item) else {
                fail("insert at \(path), outside the new counts")
                continue
            }
            rebuilt[path.section][path.item] = after[path.section][path.item]
        }
        for (from, to) in batch.moveItems {
            guard before.indices.contains(from.section), before[from.section].indices.contains(from.item),
                rebuilt.indices.contains(to.section), rebuilt[to.section].indices.contains(to.item)
            else {
                fail("move \(from)→\(to) out of range")
                continue
            }
            rebuilt[to.section][to.item] = before[from.section][from.item]
        }
        for (old, new) in newIndexOfOld {
            let survivors = before[old].indices.filter {
                let path = ItemPath(section: old, item: $0)
                return !deletedItems.contains(path) && !movedItems.contains(path)
            }
            var next = survivors.makeIterator()
            for slot in rebuilt[new].indices where rebuilt[new][slot] == nil {
                rebuilt[new][slot] = next.next().map { before[old][$0] }
            }
        }
        for section in inserted { rebuilt[section] = after[section] }
        cells = rebuilt.map { $0.map { $0 ?? "?" } }
        if cells != after { fail("the cells rebuilt from the batch are not the data source's window") }
    }
}
