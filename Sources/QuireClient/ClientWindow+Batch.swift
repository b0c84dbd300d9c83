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
        let plan = try BatchSections(batch, before: before, finalCount: finalCount)
        let items = try BatchItems(batch, before: before, sections: plan)
        var result = try Self.assemble(batch, before: before, sections: plan, items: items)
        try Self.update(&result, batch)
        sections = result
    }

    /// The sections after the batch with the items of every surviving section: those that stay, in their order,
    /// around those that arrive. Checks each section's count.
    private static func assemble(
        _ batch: BatchChanges, before: [ClientSection], sections plan: BatchSections, items: BatchItems
    ) throws -> [ClientSection] {
        var result = plan.placed.map { $0! }
        for (oldIndex, newIndex) in plan.oldToNew.enumerated() where newIndex >= 0 {
            let staying = before[oldIndex].items.count - items.removed[oldIndex].count
            let leaves = staying + items.arriving[newIndex].count
            guard leaves == batch.counts[newIndex] else {
                throw ChangeError("counts[\(newIndex)] is \(batch.counts[newIndex]), the batch leaves \(leaves)")
            }
            var sectionItems: [ClientJSON] = []
            sectionItems.reserveCapacity(batch.counts[newIndex])
            var remaining = before[oldIndex].items.indices.lazy.filter { !items.removed[oldIndex].contains($0) }
                .makeIterator()
            for position in 0..<batch.counts[newIndex] {
                if let item = items.arriving[newIndex][position] {
                    sectionItems.append(item)
                } else {
                    sectionItems.append(before[oldIndex].items[remaining.next()!])
                }
            }
            result[newIndex].items = sectionItems
        }
        return result
    }

    /// The batch's updates of items and of sections' headers and footers, at indexes after the batch.
    private static func update(_ result: inout [ClientSection], _ batch: BatchChanges) throws {
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
    }
}

/// Where a batch puts each section: its deletes, inserts and moves checked, and the sections that stay placed in
/// the slots left.
private struct BatchSections {
    /// The sections after the batch, their items as before it.
    var placed: [ClientSection?]
    var deleted = Set<Int>()
    var inserted = Set<Int>()
    var movedFrom = Set<Int>()
    var movedTo = Set<Int>()
    /// The index after the batch of each section before it; -1 for a deleted one.
    var oldToNew: [Int]

    init(_ batch: BatchChanges, before: [ClientSection], finalCount: Int) throws {
        placed = [ClientSection?](repeating: nil, count: finalCount)
        oldToNew = [Int](repeating: -1, count: before.count)
        for index in batch.deleteSections {
            guard before.indices.contains(index), deleted.insert(index).inserted else {
                throw ChangeError("deleteSections: bad or repeated index \(index)")
            }
        }
        for insert in batch.insertSections {
            guard placed.indices.contains(insert.index), placed[insert.index] == nil else {
                throw ChangeError("insertSections: bad or repeated index \(insert.index)")
            }
            placed[insert.index] = insert.section
            inserted.insert(insert.index)
        }
        for move in batch.moveSections {
            guard before.indices.contains(move.from), !deleted.contains(move.from), movedFrom.insert(move.from).inserted
            else { throw ChangeError("moveSections: bad or repeated source \(move.from)") }
            guard placed.indices.contains(move.to), placed[move.to] == nil else {
                throw ChangeError("moveSections: bad or repeated target \(move.to)")
            }
            placed[move.to] = before[move.from]
            oldToNew[move.from] = move.to
        }
        var slot = 0
        for index in before.indices where !deleted.contains(index) && !movedFrom.contains(index) {
            while slot < finalCount, placed[slot] != nil { slot += 1 }
            guard slot < finalCount else { throw ChangeError("sections do not add up") }
            placed[slot] = before[index]
            oldToNew[index] = slot
        }
        guard placed.allSatisfy({ $0 != nil }) else { throw ChangeError("sections do not add up") }
        for move in batch.moveSections { movedTo.insert(move.to) }
        for insert in batch.insertSections where batch.counts[insert.index] != insert.section.items.count {
            throw ChangeError("counts[\(insert.index)] is not the inserted section's item count")
        }
    }
}

/// The items a batch takes out of each section before it (deleted or moved) and puts into each after it (inserted
/// or moved), each index path checked.
private struct BatchItems {
    /// By section before the batch, the indexes of the items that leave it.
    var removed: [Set<Int>]
    /// By section after the batch, the items that arrive, by their index.
    var arriving: [[Int: ClientJSON]]

    init(_ batch: BatchChanges, before: [ClientSection], sections: BatchSections) throws {
        removed = [Set<Int>](repeating: [], count: before.count)
        arriving = [[Int: ClientJSON]](repeating: [:], count: sections.placed.count)
        for path in batch.deleteItems { try leave(path, "deleteItems", before: before, sections: sections) }
        for move in batch.moveItems { try leave(move.from, "moveItems", before: before, sections: sections) }
        for insert in batch.insertItems { try arrive(insert.at, insert.item, "insertItems", batch, sections) }
        for move in batch.moveItems {
            try arrive(move.to, before[move.from[0]].items[move.from[1]], "moveItems", batch, sections)
        }
    }

    /// An item that leaves its section: in range before the batch, not in a deleted or moved section, once.
    private mutating func leave(
        _ path: [Int], _ what: String, before: [ClientSection], sections: BatchSections
    ) throws {
        guard path.count == 2, before.indices.contains(path[0]), before[path[0]].items.indices.contains(path[1])
        else { throw ChangeError("\(what): index path \(path) out of range before the batch") }
        guard !sections.deleted.contains(path[0]) else {
            throw ChangeError("\(what): \(path) is in a deleted section")
        }
        guard !sections.movedFrom.contains(path[0]) else { throw ChangeError("\(what): \(path) is in a moved section") }
        guard removed[path[0]].insert(path[1]).inserted else { throw ChangeError("\(what): \(path) used twice") }
    }

    /// An item that arrives: in range after the batch, not in an inserted or moved section, once.
    private mutating func arrive(
        _ path: [Int], _ item: ClientJSON, _ what: String, _ batch: BatchChanges, _ sections: BatchSections
    ) throws {
        guard path.count == 2, batch.counts.indices.contains(path[0]), path[1] >= 0, path[1] < batch.counts[path[0]]
        else { throw ChangeError("\(what): index path \(path) out of range after the batch") }
        guard !sections.inserted.contains(path[0]) else {
            throw ChangeError("\(what): \(path) is in an inserted section")
        }
        guard !sections.movedTo.contains(path[0]) else {
            throw ChangeError("\(what): \(path) is in a moved section")
        }
        guard arriving[path[0]].updateValue(item, forKey: path[1]) == nil else {
            throw ChangeError("\(what): \(path) used twice")
        }
    }
}
