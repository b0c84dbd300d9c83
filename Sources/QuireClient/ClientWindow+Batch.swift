extension ClientWindow {
    /// Applies a decoded `batch` after checking its rules: indexes in range and used once, no item moving
    /// out of a deleted section or into an inserted one, no item changes in a moved section, and `counts`
    /// matching what the deletes, inserts and moves leave.
    ///
    /// - Throws: ``ChangeError`` naming the broken rule; the window is unchanged.
    public mutating func apply(_ batch: BatchChanges) throws {
        let before = sections
        let finalCount = before.count - batch.deleteSections.count + batch.insertSections.count
        guard batch.counts.count == finalCount else {
            throw ChangeError("counts has \(batch.counts.count) sections, the batch leaves \(finalCount)")
        }
        // Sections.
        var deletedSections = Set<Int>()
        for index in batch.deleteSections {
            guard before.indices.contains(index), deletedSections.insert(index).inserted else {
                throw ChangeError("deleteSections: bad or repeated index \(index)")
            }
        }
        var placed = [ClientSection?](repeating: nil, count: finalCount)
        var insertedSections = Set<Int>()
        for insert in batch.insertSections {
            guard placed.indices.contains(insert.index), placed[insert.index] == nil else {
                throw ChangeError("insertSections: bad or repeated index \(insert.index)")
            }
            placed[insert.index] = insert.section
            insertedSections.insert(insert.index)
        }
        var movedFrom = Set<Int>()
        var oldToNew = [Int](repeating: -1, count: before.count)
        for move in batch.moveSections {
            guard before.indices.contains(move.from), !deletedSections.contains(move.from),
                movedFrom.insert(move.from).inserted
            else { throw ChangeError("moveSections: bad or repeated source \(move.from)") }
            guard placed.indices.contains(move.to), placed[move.to] == nil else {
                throw ChangeError("moveSections: bad or repeated target \(move.to)")
            }
            placed[move.to] = before[move.from]
            oldToNew[move.from] = move.to
        }
        var slot = 0
        for index in before.indices where !deletedSections.contains(index) && !movedFrom.contains(index) {
            while slot < finalCount, placed[slot] != nil { slot += 1 }
            guard slot < finalCount else { throw ChangeError("sections do not add up") }
            placed[slot] = before[index]
            oldToNew[index] = slot
        }
        guard placed.allSatisfy({ $0 != nil }) else { throw ChangeError("sections do not add up") }
        var movedSectionTargets = Set<Int>()
        for move in batch.moveSections { movedSectionTargets.insert(move.to) }
        for insert in batch.insertSections where batch.counts[insert.index] != insert.section.items.count {
            throw ChangeError("counts[\(insert.index)] is not the inserted section's item count")
        }

        // Items: sources before the batch.
        var removed = [Set<Int>](repeating: [], count: before.count)
        func checkSource(_ path: [Int], _ what: String) throws {
            guard path.count == 2, before.indices.contains(path[0]), before[path[0]].items.indices.contains(path[1])
            else { throw ChangeError("\(what): index path \(path) out of range before the batch") }
            guard !deletedSections.contains(path[0]) else {
                throw ChangeError("\(what): \(path) is in a deleted section")
            }
            guard !movedFrom.contains(path[0]) else { throw ChangeError("\(what): \(path) is in a moved section") }
            guard removed[path[0]].insert(path[1]).inserted else { throw ChangeError("\(what): \(path) used twice") }
        }
        for path in batch.deleteItems { try checkSource(path, "deleteItems") }
        for move in batch.moveItems { try checkSource(move.from, "moveItems") }

        // Items: targets after the batch.
        var arriving = [[Int: ClientJSON]](repeating: [:], count: finalCount)
        func checkTarget(_ path: [Int], _ item: ClientJSON, _ what: String) throws {
            guard path.count == 2, batch.counts.indices.contains(path[0]), path[1] >= 0,
                path[1] < batch.counts[path[0]]
            else { throw ChangeError("\(what): index path \(path) out of range after the batch") }
            guard !insertedSections.contains(path[0]) else {
                throw ChangeError("\(what): \(path) is in an inserted section")
            }
            guard !movedSectionTargets.contains(path[0]) else {
                throw ChangeError("\(what): \(path) is in a moved section")
            }
            guard arriving[path[0]].updateValue(item, forKey: path[1]) == nil else {
                throw ChangeError("\(what): \(path) used twice")
            }
        }
        for insert in batch.insertItems { try checkTarget(insert.at, insert.item, "insertItems") }
        for move in batch.moveItems {
            try checkTarget(move.to, before[move.from[0]].items[move.from[1]], "moveItems")
        }

        // Counts, then the new items of every surviving section.
        var result = placed.map { $0! }
        for (oldIndex, newIndex) in oldToNew.enumerated() where newIndex >= 0 {
            let staying = before[oldIndex].items.count - removed[oldIndex].count
            let leaves = staying + arriving[newIndex].count
            guard leaves == batch.counts[newIndex] else {
                throw ChangeError("counts[\(newIndex)] is \(batch.counts[newIndex]), the batch leaves \(leaves)")
            }
            var items: [ClientJSON] = []
            items.reserveCapacity(batch.counts[newIndex])
            var remaining = before[oldIndex].items.indices.lazy.filter { !removed[oldIndex].contains($0) }
                .makeIterator()
            for position in 0..<batch.counts[newIndex] {
                if let item = arriving[newIndex][position] {
                    items.append(item)
                } else {
                    items.append(before[oldIndex].items[remaining.next()!])
                }
            }
            result[newIndex].items = items
        }

        // Updates, at indexes after the batch.
        var updatedPaths = Set<[Int]>()
        for update in batch.updateItems {
            let path = update.at
            guard path.count == 2, result.indices.contains(path[0]), result[path[0]].items.indices.contains(path[1]),
                updatedPaths.insert(path).inserted
            else { throw ChangeError("updateItems: bad or repeated index path \(path)") }
            guard result[path[0]].items[path[1]]["id"] == update.item["id"] else {
                throw ChangeError("updateItems: \(path) holds another item")
            }
            result[path[0]].items[path[1]] = update.item
        }
        var updatedSections = Set<Int>()
        for update in batch.updateSections {
            guard result.indices.contains(update.index), updatedSections.insert(update.index).inserted else {
                throw ChangeError("updateSections: bad or repeated index \(update.index)")
            }
            result[update.index].header = update.header
            result[update.index].footer = update.footer
        }
        sections = result
    }
}
