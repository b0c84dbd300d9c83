extension Window {
    /// The changes from this window (the client's) to `new`.
    ///
    /// Sections: deletes, inserts, moves (minimal, by longest increasing subsequence), header/footer
    /// updates; a moved section whose items change is sent as delete + insert. Items: deletes, inserts,
    /// moves within and across surviving sections (minimal within each section), content updates by hash.
    ///
    /// - Complexity: O(*k* log *k*) in the windows' size *k* (the subsequences), linear otherwise.
    public func changes(to new: Window) -> WindowChanges {
        let old = self
        // Sections matched by key.
        var oldSectionIndex: [Int32: Int] = [:]
        for (index, section) in old.sections.enumerated() { oldSectionIndex[section.key] = index }
        var newToOld = [Int](repeating: -1, count: new.sections.count)
        var common: [Int] = []
        for (index, section) in new.sections.enumerated() {
            if let oldIndex = oldSectionIndex[section.key] {
                newToOld[index] = oldIndex
                common.append(index)
            }
        }
        let stayMask = longestIncreasingSubsequenceMask(common.map { newToOld[$0] })
        var sectionStays = [Bool](repeating: false, count: new.sections.count)
        for (position, index) in common.enumerated() {
            sectionStays[index] = stayMask[position]
            // A section that moves and whose items change goes as delete + insert.
            if !stayMask[position], !Self.sameItems(old.sections[newToOld[index]], new.sections[index]) {
                newToOld[index] = -1
            }
        }
        var oldToNew = [Int](repeating: -1, count: old.sections.count)
        for (index, oldIndex) in newToOld.enumerated() where oldIndex >= 0 { oldToNew[oldIndex] = index }

        // Item positions in surviving old sections.
        var maximumKey: Int32 = 0
        var itemTotal = 0
        for section in old.sections {
            for item in section.items { maximumKey = max(maximumKey, item.key) }
            itemTotal += section.items.count
        }
        for section in new.sections {
            for item in section.items { maximumKey = max(maximumKey, item.key) }
        }
        var positions = KeyPositions(maximumKey: maximumKey, expectedCount: itemTotal)
        var oldTargets = [[Int64]](repeating: [], count: old.sections.count)
        for (oldIndex, section) in old.sections.enumerated() where oldToNew[oldIndex] >= 0 {
            section.items.withUnsafeBufferPointer { items in
                for itemIndex in items.indices {
                    positions[items[itemIndex].key] = WindowChanges.pack(oldIndex, itemIndex)
                }
            }
            oldTargets[oldIndex] = [Int64](repeating: -1, count: section.items.count)
        }

        let oldHashes = old.sections.map { section in
            section.items.withUnsafeBufferPointer { items in items.map(\.hash) }
        }
        var newSources = [[Int64]](repeating: [], count: new.sections.count)
        var itemStays = [[Bool]](repeating: [], count: new.sections.count)
        var itemUpdates = [[Bool]](repeating: [], count: new.sections.count)
        var inserted = 0
        var moved = 0
        var updated = 0
        var matched = 0
        var sameSection: [Int] = []
        var sameSectionIndexes: [Int] = []
        for (newIndex, section) in new.sections.enumerated() where newToOld[newIndex] >= 0 {
            let oldIndex = newToOld[newIndex]
            var sources = [Int64](repeating: -1, count: section.items.count)
            var stays = [Bool](repeating: false, count: section.items.count)
            var updates = [Bool](repeating: false, count: section.items.count)
            sameSection.removeAll(keepingCapacity: true)
            sameSectionIndexes.removeAll(keepingCapacity: true)
            section.items.withUnsafeBufferPointer { items in
                for itemIndex in items.indices {
                    let source = positions[items[itemIndex].key]
                    guard source >= 0 else {
                        inserted += 1
                        continue
                    }
                    matched += 1
                    sources[itemIndex] = source
                    let sourceSection = WindowChanges.section(source)
                    let sourceItem = WindowChanges.item(source)
                    oldTargets[sourceSection][sourceItem] = WindowChanges.pack(newIndex, itemIndex)
                    if oldHashes[sourceSection][sourceItem] != items[itemIndex].hash {
                        updates[itemIndex] = true
                        updated += 1
                    }
                    if sourceSection == oldIndex {
                        sameSection.append(sourceItem)
                        sameSectionIndexes.append(itemIndex)
                    } else {
                        moved += 1
                    }
                }
            }
            let mask = longestIncreasingSubsequenceMask(sameSection)
            for (position, itemIndex) in sameSectionIndexes.enumerated() {
                if mask[position] { stays[itemIndex] = true } else { moved += 1 }
            }
            newSources[newIndex] = sources
            itemStays[newIndex] = stays
            itemUpdates[newIndex] = updates
        }
        var surviving = 0
        var updatedSections = 0
        for (newIndex, oldIndex) in newToOld.enumerated() where oldIndex >= 0 {
            surviving += 1
            if old.sections[oldIndex].node.supplementaryHash != new.sections[newIndex].node.supplementaryHash {
                updatedSections += 1
            }
        }
        var oldSurvivingItems = 0
        for (oldIndex, section) in old.sections.enumerated() where oldToNew[oldIndex] >= 0 {
            oldSurvivingItems += section.items.count
        }
        let changes = WindowChanges(
            old: old, new: new, oldToNew: oldToNew, newToOld: newToOld, sectionStays: sectionStays,
            oldTargets: oldTargets, newSources: newSources, itemStays: itemStays, itemUpdates: itemUpdates,
            deletedSectionCount: old.sections.count - surviving, insertedSectionCount: new.sections.count - surviving,
            movedSectionCount: zip(newToOld, sectionStays).filter { $0.0 >= 0 && !$0.1 }.count,
            updatedSectionCount: updatedSections, deletedItemCount: oldSurvivingItems - matched,
            insertedItemCount: inserted, movedItemCount: moved, updatedItemCount: updated)
        changes.checkBatchRules()
        return changes
    }

    /// Whether both slices hold the same items in the same order.
    private static func sameItems(_ old: WindowSection, _ new: WindowSection) -> Bool {
        guard old.items.count == new.items.count else { return false }
        for index in old.items.indices where old.items[index].key != new.items[index].key { return false }
        return true
    }
}
