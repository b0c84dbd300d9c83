extension Window {
    /// The changes from this window (the client's) to `new`.
    ///
    /// Sections: deletes, inserts, moves (minimal, by longest increasing subsequence), header/footer
    /// updates; a moved section whose items change is sent as delete + insert. Items: deletes, inserts,
    /// moves within and across surviving sections (minimal within each section), content updates by hash.
    /// Windows of different lineages (different id tables) are diffed as a replacement of every section.
    ///
    /// - Complexity: O(*k* log *k*) in the windows' size *k* (the subsequences), linear otherwise.
    public func changes(to new: Window) -> WindowChanges {
        let old = self
        let (oldToNew, newToOld, sectionStays) = Self.matchSections(old, new)
        let oldBase = Self.bases(of: old)
        let newBase = Self.bases(of: new)
        let oldCount = oldBase[oldBase.count - 1]
        let newCount = newBase[newBase.count - 1]

        // Old items of surviving sections by key, and their hashes.
        let maximumKey = max(old.maximumKey, new.maximumKey, 0)
        var positions = KeyPositions(maximumKey: maximumKey, expectedCount: oldCount + newCount)
        var oldTargets = [Int32](repeating: -2, count: oldCount)
        var oldHashes = [UInt64](repeating: 0, count: oldCount)
        var listedOld = 0
        for (oldIndex, section) in old.sections.enumerated() where oldToNew[oldIndex] >= 0 {
            let base = oldBase[oldIndex]
            listedOld += section.items.count
            section.items.withUnsafeBufferPointer { items in
                for index in items.indices {
                    positions[items[index].key] = Int32(base + index)
                    oldTargets[base + index] = -1
                    oldHashes[base + index] = items[index].hash
                }
            }
        }

        // New items of surviving sections: where from, moved or not, changed or not.
        var newSources = [Int32](repeating: -2, count: newCount)
        var newFlags = [UInt8](repeating: 0, count: newCount)
        var inserted = 0
        var moved = 0
        var updated = 0
        var matched = 0
        var sameSection: [Int32] = []
        var sameSectionIndexes: [Int32] = []
        for (newIndex, section) in new.sections.enumerated() where newToOld[newIndex] >= 0 {
            let oldIndex = newToOld[newIndex]
            let base = newBase[newIndex]
            let oldStart = oldBase[oldIndex]
            let oldEnd = oldBase[oldIndex + 1]
            sameSection.removeAll(keepingCapacity: true)
            sameSectionIndexes.removeAll(keepingCapacity: true)
            section.items.withUnsafeBufferPointer { items in
                for index in items.indices {
                    let flat = base + index
                    let source = positions[items[index].key]
                    newSources[flat] = source
                    guard source >= 0 else {
                        inserted += 1
                        continue
                    }
                    matched += 1
                    let sourceFlat = Int(source)
                    oldTargets[sourceFlat] = Int32(flat)
                    if oldHashes[sourceFlat] != items[index].hash {
                        newFlags[flat] = WindowChanges.updated
                        updated += 1
                    }
                    if sourceFlat >= oldStart && sourceFlat < oldEnd {
                        sameSection.append(Int32(sourceFlat))
                        sameSectionIndexes.append(Int32(flat))
                    } else {
                        moved += 1
                    }
                }
            }
            let mask = longestIncreasingSubsequenceMask(sameSection)
            for (position, flat) in sameSectionIndexes.enumerated() {
                if mask[position] { newFlags[Int(flat)] |= WindowChanges.stays } else { moved += 1 }
            }
        }
        var surviving = 0
        var updatedSections = 0
        var movedSections = 0
        for (newIndex, oldIndex) in newToOld.enumerated() where oldIndex >= 0 {
            surviving += 1
            if !sectionStays[newIndex] { movedSections += 1 }
            if old.sections[oldIndex].node.supplementaryHash != new.sections[newIndex].node.supplementaryHash {
                updatedSections += 1
            }
        }
        let changes = WindowChanges(
            old: old, new: new, oldToNew: oldToNew, newToOld: newToOld, sectionStays: sectionStays, oldBase: oldBase,
            newBase: newBase, oldTargets: oldTargets, newSources: newSources, newFlags: newFlags,
            deletedSectionCount: old.sections.count - surviving, insertedSectionCount: new.sections.count - surviving,
            movedSectionCount: movedSections, updatedSectionCount: updatedSections,
            deletedItemCount: listedOld - matched, insertedItemCount: inserted, movedItemCount: moved,
            updatedItemCount: updated)
        changes.checkBatchRules()
        return changes
    }

    /// Sections matched by key: old → new and new → old indexes (-1 when not surviving), and which new
    /// sections keep their place. A section that moves and whose items change does not survive. Windows of
    /// two lineages (a list deleted and created again) share no keys: every section is replaced.
    private static func matchSections(_ old: Window, _ new: Window) -> ([Int], [Int], [Bool]) {
        var oldSectionIndex: [Int32: Int] = [:]
        if old.interner === new.interner {
            for (index, section) in old.sections.enumerated() { oldSectionIndex[section.key] = index }
        }
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
            if !stayMask[position], !sameItems(old.sections[newToOld[index]], new.sections[index]) {
                newToOld[index] = -1
            }
        }
        var oldToNew = [Int](repeating: -1, count: old.sections.count)
        for (index, oldIndex) in newToOld.enumerated() where oldIndex >= 0 { oldToNew[oldIndex] = index }
        return (oldToNew, newToOld, sectionStays)
    }

    /// Flat index of each section's first item, then the total.
    private static func bases(of window: Window) -> [Int] {
        var bases: [Int] = []
        bases.reserveCapacity(window.sections.count + 1)
        var total = 0
        for section in window.sections {
            bases.append(total)
            total += section.items.count
        }
        bases.append(total)
        return bases
    }

    /// Whether both slices hold the same items in the same order.
    private static func sameItems(_ old: WindowSection, _ new: WindowSection) -> Bool {
        guard old.items.count == new.items.count else { return false }
        return old.items.withUnsafeBufferPointer { oldItems in
            new.items.withUnsafeBufferPointer { newItems in
                oldItems.indices.allSatisfy { oldItems[$0].key == newItems[$0].key }
            }
        }
    }
}
