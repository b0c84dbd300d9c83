extension WindowChanges {
    /// Checks, in debug builds, the batch rules of openapi.yaml that the diff's construction promises: every
    /// surviving section's count adds up (rule 2), no moved section has item changes (rule 5), no item
    /// moves out of a deleted section or into an inserted one (rule 4), and sources and targets agree.
    ///
    /// - Complexity: O(*k*) in debug builds; nothing in release builds.
    @inline(__always)
    func checkBatchRules() {
        #if DEBUG
            var movesFrom = [Int](repeating: 0, count: old.sections.count)
            var movesTo = [Int](repeating: 0, count: new.sections.count)
            var inserts = [Int](repeating: 0, count: new.sections.count)
            for newIndex in new.sections.indices where newToOld[newIndex] >= 0 {
                for flat in newBase[newIndex]..<newBase[newIndex + 1] {
                    let source = Int(newSources[flat])
                    if source < 0 {
                        inserts[newIndex] += 1
                        continue
                    }
                    let sourceSection = oldPath(source).section
                    precondition(oldToNew[sourceSection] >= 0, "item moves out of a deleted section")
                    precondition(Int(oldTargets[source]) == flat, "targets disagree")
                    if newFlags[flat] & Self.stays == 0 {
                        movesFrom[sourceSection] += 1
                        movesTo[newIndex] += 1
                    }
                }
            }
            for (newIndex, oldIndex) in newToOld.enumerated() where oldIndex >= 0 {
                let deleted = oldTargets[oldBase[oldIndex]..<oldBase[oldIndex + 1]].filter { $0 == -1 }.count
                let before = old.sections[oldIndex].items.count
                precondition(
                    before - deleted - movesFrom[oldIndex] + inserts[newIndex] + movesTo[newIndex]
                        == new.sections[newIndex].items.count,
                    "section count does not add up")
                if !sectionStays[newIndex] {
                    precondition(
                        deleted == 0 && inserts[newIndex] == 0 && movesTo[newIndex] == 0 && movesFrom[oldIndex] == 0,
                        "a moved section has item changes")
                }
            }
        #endif
    }
}
