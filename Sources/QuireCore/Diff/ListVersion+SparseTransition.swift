extension ListVersion {
    /// The window a session moves to in this version and the changes that bring its client there, computed
    /// from what the versions in between changed (their ``ChangeLog``) instead of from every item of both
    /// windows. The result is the one ``window(following:expanded:extend:bound:)`` and
    /// ``Window/changes(to:)`` give, byte for byte once encoded.
    ///
    /// How: every item the log does not name kept its node, its container and its place among its
    /// siblings, so the old window is a few *touched* items between long untouched *runs*, and each run
    /// is still contiguous, in order, in this version. A run is located by its first and last item (and
    /// checked to be whole); touched items are located one by one; the longest increasing subsequences of
    /// both diff steps are taken over runs weighted by their length
    /// (``longestIncreasingSubsequenceMask(runs:)``). What is read item by item is only what the answer
    /// writes: touched items, items entering the window, items leaving it.
    ///
    /// Answers `nil`, so that the full window diff answers instead, when that is the cheaper or the only
    /// way: the log does not reach back to the window's version (a `PUT`, a reload from storage, a window
    /// many versions behind), the changes are large next to the window, a section moved or was removed and
    /// created again, or a run of untouched items would not stay in place (touched items outnumber it).
    ///
    /// Expanding or collapsing an item is a change like a write: the children it shows or hides are
    /// touched.
    ///
    /// - Parameters:
    ///   - base: the window the client holds.
    ///   - expanded: the expanded ids of the new window.
    ///   - extend: growth asked for with this request.
    ///   - bound: the session's bound on its window.
    /// - Complexity: O((*c* + *r*)(*e* + *d* log *n*) + *s* + *w*) for *c* touched items, *r* untouched
    ///   runs (about *c* plus the window's sections), *s* sections in the two windows and *w* items written
    ///   (entering, leaving or changed); nothing is proportional to the window's size.
    func sparseTransition(
        from base: SessionWindow, expanded: Set<String>, extend: WindowExtension, bound: WindowBound
    ) -> (changes: SparseChanges, window: SessionWindow)? {
        let old = base.version
        let budget = 64 + base.range.count / 4
        guard old.interner === interner, old.version <= version,
            var delta = changeLog.changes(since: old.version), !delta.reordersSections, delta.items.count <= budget
        else { return nil }
        var builder = SparseTransitionBuilder(old: old, new: self, base: base, expanded: expanded)
        for id in base.expanded.symmetricDifference(expanded) {
            guard let key = interner.lookup(id) else { continue }
            builder.touchShownChildren(of: key, into: &delta.items)
            guard delta.items.count <= budget else { return nil }
        }
        return builder.build(delta: delta, extend: extend, bound: bound)
    }
}

/// The steps of ``ListVersion/sparseTransition(from:extend:bound:)``. Positions are visible positions;
/// "flat" indexes count the old window's items across its sections.
private struct SparseTransitionBuilder {
    /// A stretch of untouched items of one old section: `count` items from old flat index `flat`, at
    /// visible positions `position ..< position + count` of the new version.
    struct Run {
        var flat: Int
        var count: Int
        var position: Int
        let oldSection: Int
    }

    /// A touched item of the old window.
    struct OldTouched {
        let flat: Int
        let item: WindowItem
        let oldSection: Int
        /// Its visible position in the new version, if it has one.
        let position: Int?
    }

    let old: ListVersion
    let new: ListVersion
    let base: SessionWindow
    let expanded: Set<String>
    let oldLayout: VisibleLayout
    let newLayout: VisibleLayout
    let oldStart: Int

    init(old: ListVersion, new: ListVersion, base: SessionWindow, expanded: Set<String>) {
        self.old = old
        self.new = new
        self.base = base
        self.expanded = expanded
        oldLayout = VisibleLayout(version: old, expanded: base.expanded)
        newLayout = VisibleLayout(version: new, expanded: expanded)
        oldStart = base.range.lowerBound
    }

    /// Adds the children that the item `key` shows in either window (it is expanded in one of them), and
    /// theirs when they are expanded too.
    func touchShownChildren(of key: Int32, into touched: inout Set<Int32>) {
        for (version, layout) in [(old, oldLayout), (new, newLayout)] where layout.expandedKeys.contains(key) {
            var pending = [version.item(key: key)!]
            while let node = pending.popLast() {
                node.children.forEach { _, child in
                    touched.insert(child.key)
                    if layout.expandedKeys.contains(child.key) { pending.append(child) }
                    return true
                }
            }
        }
    }

    mutating func build(delta: CombinedDelta, extend: WindowExtension, bound: WindowBound)
        -> (SparseChanges, SessionWindow)?
    {
        // The old window's sections, and which of them still exist.
        let (start, end, oldSlices) = old.sectionSlices(range: base.range, layout: oldLayout)
        let delta = delta
        guard start == base.range.lowerBound, end == base.range.upperBound else { return nil }
        var oldBases: [Int] = []
        oldBases.reserveCapacity(oldSlices.count + 1)
        var flatTotal = 0
        var oldSectionExists: [Bool] = []
        for slice in oldSlices {
            oldBases.append(flatTotal)
            flatTotal += slice.length
            let exists = new.sectionIndex.value(for: slice.node.key) != nil
            // A section removed and created again holds other items under the same key: diff it whole.
            if exists && delta.replacedSections.contains(slice.node.key) { return nil }
            oldSectionExists.append(exists)
        }
        oldBases.append(flatTotal)

        // Touched items: where they were in the old window, where they are now.
        var oldTouched: [OldTouched] = []
        var newTouched: [(position: Int, key: Int32)] = []
        for key in delta.items {
            let newPosition = newLayout.position(of: key)
            if let position = newPosition { newTouched.append((position, key)) }
            guard let position = oldLayout.position(of: key), base.range.contains(position) else { continue }
            guard let item = old.visibleItem(at: position, layout: oldLayout), item.key == key else { return nil }
            let flat = position - oldStart
            oldTouched.append(
                OldTouched(
                    flat: flat, item: item, oldSection: WindowChanges.section(of: flat, in: oldBases),
                    position: newPosition))
        }
        oldTouched.sort { $0.flat < $1.flat }
        newTouched.sort { $0.position < $1.position }

        // Untouched runs of the sections that still exist, located in the new version.
        guard var runs = locateRuns(oldSlices, oldBases, oldSectionExists, oldTouched) else { return nil }
        guard splitRuns(&runs, at: newTouched.map(\.position)), runs.allSatisfy(isWhole) else { return nil }

        // The new window's run of positions, as window(following:) finds it.
        var survivors: [IncreasingRun] = []
        var isRun: [Bool] = []
        var runCursor = 0
        for touched in oldTouched {
            while runCursor < runs.count && runs[runCursor].flat < touched.flat {
                let run = runs[runCursor]
                survivors.append(
                    IncreasingRun(low: run.position, high: run.position + run.count - 1, weight: run.count))
                isRun.append(true)
                runCursor += 1
            }
            if let position = touched.position {
                survivors.append(IncreasingRun(low: position, high: position, weight: 1))
                isRun.append(false)
            }
        }
        for run in runs[runCursor...] {
            survivors.append(IncreasingRun(low: run.position, high: run.position + run.count - 1, weight: run.count))
            isRun.append(true)
        }
        guard let kept = longestIncreasingSubsequenceMask(runs: survivors),
            zip(kept, isRun).allSatisfy({ $0 || !$1 })
        else { return nil }
        var keptRange: (start: Int, end: Int)?
        let keptRuns = survivors.indices.filter { kept[$0] }.map { survivors[$0] }
        if let first = keptRuns.first, let last = keptRuns.last {
            // The same positions window(following:) keeps, read from the runs (a run of n holds n positions).
            let second = first.high > first.low ? first.low + 1 : keptRuns.dropFirst().first?.low
            let penultimate = last.high > last.low ? last.high - 1 : keptRuns.dropLast().last?.high
            let neighbours = base.neighbours(in: new, layout: oldLayout)
            keptRange = WindowBound.keptEnds(
                first: first.low, second: second, penultimate: penultimate, last: last.high,
                before: neighbours.before.flatMap { newLayout.position(of: $0) },
                after: neighbours.after.flatMap { newLayout.position(of: $0) })
        }
        let newRange = bound.range(kept: keptRange, old: base.range, total: newLayout.total, extend: extend)

        // The new window's sections, matched with the old ones.
        let (newStart, newEnd, newSlices) = new.sectionSlices(range: newRange, layout: newLayout)
        var oldSectionIndex: [Int32: Int] = [:]
        for (index, slice) in oldSlices.enumerated() { oldSectionIndex[slice.node.key] = index }
        var newToOld = [Int](repeating: -1, count: newSlices.count)
        var oldToNew = [Int](repeating: -1, count: oldSlices.count)
        var lastMatched = -1
        for (index, slice) in newSlices.enumerated() {
            guard let oldIndex = oldSectionIndex[slice.node.key] else { continue }
            guard oldIndex > lastMatched else { return nil }  // sections out of order: not here
            lastMatched = oldIndex
            newToOld[index] = oldIndex
            oldToNew[oldIndex] = index
        }

        // Runs cut at the window's ends: each part is inside the new window or outside it.
        splitRuns(&runs, atBoundaries: [newStart, newEnd])
        return assemble(
            oldSlices: oldSlices, oldBases: oldBases, newSlices: newSlices, newRange: newStart..<newEnd,
            oldToNew: oldToNew, newToOld: newToOld, runs: runs, oldTouched: oldTouched, newTouched: newTouched)
    }

    /// The untouched stretches of every old section that still exists, each located by its first item.
    private func locateRuns(
        _ slices: [SectionSlice], _ bases: [Int], _ exists: [Bool], _ touched: [OldTouched]
    ) -> [Run]? {
        var runs: [Run] = []
        var cursor = 0
        for (section, slice) in slices.enumerated() {
            var flat = bases[section]
            let end = flat + slice.length
            while cursor < touched.count && touched[cursor].flat < flat { cursor += 1 }
            while flat < end {
                var stop = end
                if cursor < touched.count && touched[cursor].flat < end { stop = touched[cursor].flat }
                if stop > flat && exists[section] {
                    guard let position = newPosition(ofOld: flat) else { return nil }
                    runs.append(Run(flat: flat, count: stop - flat, position: position, oldSection: section))
                }
                flat = stop
                if flat < end {  // skip the touched item
                    flat += 1
                    cursor += 1
                }
            }
        }
        for index in runs.indices.dropFirst() where runs[index].position <= runs[index - 1].position {
            return nil
        }
        return runs
    }

    /// Cuts runs where touched items now stand among them (`positions` sorted): untouched items next to each
    /// other in the old window are next to each other now but for the touched items between them.
    private func splitRuns(_ runs: inout [Run], at positions: [Int]) -> Bool {
        var result: [Run] = []
        result.reserveCapacity(runs.count + positions.count)
        var cursor = 0
        for var run in runs {
            while cursor < positions.count && positions[cursor] < run.position { cursor += 1 }
            while run.count > 0 {
                guard cursor < positions.count, positions[cursor] < run.position + run.count else {
                    result.append(run)
                    break
                }
                let touched = positions[cursor]
                cursor += 1
                if touched == run.position {
                    // A touched item right where the rest of the run resumes: it comes first. (Where the
                    // run's first item was located, this cannot happen; ``isWhole(_:)`` would catch it.)
                    run.position += 1
                    continue
                }
                let length = touched - run.position
                result.append(Run(flat: run.flat, count: length, position: run.position, oldSection: run.oldSection))
                run = Run(
                    flat: run.flat + length, count: run.count - length, position: touched + 1,
                    oldSection: run.oldSection)
            }
        }
        runs = result
        return true
    }

    /// Cuts runs at the given positions, without checking anything (the runs are already known whole).
    private func splitRuns(_ runs: inout [Run], atBoundaries boundaries: [Int]) {
        var result: [Run] = []
        result.reserveCapacity(runs.count + boundaries.count)
        for var run in runs {
            for boundary in boundaries where boundary > run.position && boundary < run.position + run.count {
                let length = boundary - run.position
                result.append(Run(flat: run.flat, count: length, position: run.position, oldSection: run.oldSection))
                run = Run(
                    flat: run.flat + length, count: run.count - length, position: boundary, oldSection: run.oldSection)
            }
            result.append(run)
        }
        runs = result
    }

    /// Whether the run's first and last items stand where the run says: it is then whole, since untouched
    /// items keep their order and nothing untouched can come between them.
    private func isWhole(_ run: Run) -> Bool {
        guard newPosition(ofOld: run.flat) == run.position else { return false }
        return run.count == 1 || newPosition(ofOld: run.flat + run.count - 1) == run.position + run.count - 1
    }

    /// The old section holding flat index `flat` (past empty sections).
    static func section(of flat: Int, in bases: [Int]) -> Int {
        var section = WindowChanges.section(of: flat, in: bases)
        while bases[section + 1] <= flat { section += 1 }
        return section
    }

    /// Where the old window's item at `flat` stands in the new version.
    private func newPosition(ofOld flat: Int) -> Int? {
        guard let item = old.visibleItem(at: oldStart + flat, layout: oldLayout) else { return nil }
        return newLayout.position(of: item.key)
    }

    /// The old window's items `flat ..< flat + count`, read.
    private func oldItems(_ flat: Int, _ count: Int) -> [WindowItem] {
        readItems(of: old, layout: oldLayout, positions: (oldStart + flat)..<(oldStart + flat + count))
    }

    /// Items at the given positions of a version (inside one section).
    private func readItems(of version: ListVersion, layout: VisibleLayout, positions: Range<Int>) -> [WindowItem] {
        guard !positions.isEmpty else { return [] }
        var index = layout.firstSection(endingAfter: positions.lowerBound)
        while index < layout.sections.count, layout.sections[index].count == 0 { index += 1 }
        let section = layout.sections[index]
        return version.visibleItems(
            of: SectionSlice(
                layoutIndex: index, node: section.node, sectionStart: section.start,
                offset: positions.lowerBound - section.start, count: section.count, length: positions.count),
            layout: layout)
    }

    /// The pieces of both windows, the item diff of each surviving section and the counts.
    private func assemble(
        oldSlices: [SectionSlice], oldBases: [Int], newSlices: [SectionSlice], newRange: Range<Int>,
        oldToNew: [Int], newToOld: [Int], runs: [Run], oldTouched: [OldTouched],
        newTouched: [(position: Int, key: Int32)]
    ) -> (SparseChanges, SessionWindow)? {
        // Touched old items of surviving sections, by key.
        var oldByKey: [Int32: Int] = [:]
        for (index, touched) in oldTouched.enumerated() where oldToNew[touched.oldSection] >= 0 {
            oldByKey[touched.item.key] = index
        }
        // The new side, section by section: runs, touched items and what enters the window.
        var newPieces: [[SparseChanges.NewPiece]] = Array(repeating: [], count: newSlices.count)
        var insertedSections: [WindowSection?] = Array(repeating: nil, count: newSlices.count)
        var matchedOld = [Int](repeating: -1, count: oldTouched.count)  // old touched → new section, or -1
        var keptOld = [Bool](repeating: false, count: oldTouched.count)
        var runCursor = 0
        var touchedCursor = 0
        var counts = (inserted: 0, moved: 0, updated: 0, sectionItems: 0)
        // Pending moves, resolved once the old pieces are numbered: (new section, piece index, old touched).
        var moves: [(section: Int, piece: Int, touched: Int, stays: Bool)] = []
        for (index, slice) in newSlices.enumerated() {
            while touchedCursor < newTouched.count && newTouched[touchedCursor].position < slice.start {
                touchedCursor += 1
            }
            while runCursor < runs.count && runs[runCursor].position < slice.start { runCursor += 1 }
            guard newToOld[index] >= 0 else {
                let items = new.visibleItems(of: slice, layout: newLayout)
                insertedSections[index] = WindowSection(
                    node: slice.node, offset: slice.offset, count: slice.count, items: items)
                counts.sectionItems += items.count
                continue
            }
            let oldSection = newToOld[index]
            // Elements of this section in new order: runs (-1 - run index) and touched items (their index).
            var pieces: [SparseChanges.NewPiece] = []
            var sameSection: [IncreasingRun] = []
            var sameSectionPieces: [Int] = []
            var sameSectionMoves: [Int: Int] = [:]  // piece index → index in `moves`
            var position = slice.start
            func enter(upTo stop: Int) {
                guard stop > position else { return }
                let items = readItems(of: new, layout: newLayout, positions: position..<stop)
                counts.inserted += items.count
                pieces.append(.inserted(items))
                position = stop
            }
            while position < slice.end {
                let nextRun = runCursor < runs.count && runs[runCursor].position < slice.end ? runs[runCursor] : nil
                let nextTouched =
                    touchedCursor < newTouched.count && newTouched[touchedCursor].position < slice.end
                    ? newTouched[touchedCursor] : nil
                if let run = nextRun, run.position <= (nextTouched?.position ?? Int.max) {
                    enter(upTo: run.position)
                    guard run.oldSection == oldSection else { return nil }
                    sameSection.append(IncreasingRun(low: run.flat, high: run.flat + run.count - 1, weight: run.count))
                    sameSectionPieces.append(pieces.count)
                    pieces.append(.stays(count: run.count, updated: nil))
                    position = run.position + run.count
                    runCursor += 1
                } else if let touched = nextTouched {
                    enter(upTo: touched.position)
                    touchedCursor += 1
                    position = touched.position + 1
                    guard let item = new.visibleItem(at: touched.position, layout: newLayout),
                        item.key == touched.key
                    else { return nil }
                    guard let oldIndex = oldByKey[touched.key] else {
                        counts.inserted += 1
                        pieces.append(.inserted([item]))
                        continue
                    }
                    let source = oldTouched[oldIndex]
                    matchedOld[oldIndex] = index
                    let updated = source.item.hash != item.hash
                    if updated { counts.updated += 1 }
                    if source.oldSection == oldSection {
                        sameSection.append(IncreasingRun(low: source.flat, high: source.flat, weight: 1))
                        sameSectionPieces.append(pieces.count)
                    }
                    sameSectionMoves[pieces.count] = moves.count
                    moves.append((index, pieces.count, oldIndex, false))
                    pieces.append(.moved(item, section: source.oldSection, index: -1, piece: -1, updated: updated))
                } else {
                    enter(upTo: slice.end)
                }
            }
            // Runs that stay must be the ones a longest increasing subsequence keeps.
            guard let mask = longestIncreasingSubsequenceMask(runs: sameSection) else { return nil }
            for (position, pieceIndex) in sameSectionPieces.enumerated() {
                switch pieces[pieceIndex] {
                case .stays:
                    guard mask[position] else { return nil }
                case .moved(let item, _, _, _, let updated) where mask[position]:
                    let moveIndex = sameSectionMoves[pieceIndex]!
                    keptOld[moves[moveIndex].touched] = true
                    moves[moveIndex].stays = true
                    pieces[pieceIndex] = .stays(count: 1, updated: updated ? item : nil)
                default:
                    break
                }
            }
            newPieces[index] = pieces
        }

        // The old side, section by section, in old order.
        var oldPieces: [[SparseChanges.OldPiece]] = Array(repeating: [], count: oldSlices.count)
        var touchedPiece = [Int](repeating: -1, count: oldTouched.count)
        var deletedItems = 0
        var touchedCursor2 = 0
        var runCursor2 = 0
        let runsByFlat = runs.sorted { $0.flat < $1.flat }
        for (section, slice) in oldSlices.enumerated() {
            let end = oldBases[section] + slice.length
            guard oldToNew[section] >= 0 else {
                while touchedCursor2 < oldTouched.count && oldTouched[touchedCursor2].flat < end { touchedCursor2 += 1 }
                while runCursor2 < runsByFlat.count && runsByFlat[runCursor2].flat < end { runCursor2 += 1 }
                continue
            }
            var pieces: [SparseChanges.OldPiece] = []
            var flat = oldBases[section]
            while flat < end {
                if touchedCursor2 < oldTouched.count && oldTouched[touchedCursor2].flat == flat {
                    let index = touchedCursor2
                    touchedCursor2 += 1
                    flat += 1
                    if matchedOld[index] < 0 {
                        deletedItems += 1
                        pieces.append(.deleted([oldTouched[index].item]))
                    } else {
                        touchedPiece[index] = pieces.count
                        pieces.append(keptOld[index] ? .stays(count: 1) : .leaves)
                    }
                } else if runCursor2 < runsByFlat.count && runsByFlat[runCursor2].flat == flat {
                    let run = runsByFlat[runCursor2]
                    runCursor2 += 1
                    flat += run.count
                    if newRange.contains(run.position) {
                        pieces.append(.stays(count: run.count))
                    } else {
                        deletedItems += run.count
                        pieces.append(.deleted(oldItems(run.flat, run.count)))
                    }
                } else {
                    return nil  // an item of a surviving section that is neither touched nor in a run
                }
            }
            oldPieces[section] = pieces
        }

        // Moves, now that the old pieces are numbered.
        moves.removeAll { $0.stays }
        for move in moves {
            let touched = oldTouched[move.touched]
            guard case .moved(let item, let section, _, _, let updated) = newPieces[move.section][move.piece] else {
                return nil
            }
            newPieces[move.section][move.piece] = .moved(
                item, section: section, index: touched.flat - oldBases[section], piece: touchedPiece[move.touched],
                updated: updated)
        }
        counts.moved = moves.count

        var updatedSections = 0
        for (newIndex, oldIndex) in newToOld.enumerated() where oldIndex >= 0 {
            if oldSlices[oldIndex].node.supplementaryHash != newSlices[newIndex].node.supplementaryHash {
                updatedSections += 1
            }
        }
        let changes = SparseChanges(
            oldSections: oldSlices.map(\.node), newSections: newSlices.map(\.node),
            insertedSections: insertedSections, newLengths: newSlices.map(\.length), oldToNew: oldToNew,
            newToOld: newToOld, oldPieces: oldPieces, newPieces: newPieces, newCount: newRange.count,
            deletedSectionCount: oldToNew.filter { $0 < 0 }.count,
            insertedSectionCount: newToOld.filter { $0 < 0 }.count, updatedSectionCount: updatedSections,
            deletedItemCount: deletedItems, insertedItemCount: counts.inserted, movedItemCount: counts.moved,
            updatedItemCount: counts.updated, insertedSectionItemCount: counts.sectionItems)
        let window = SessionWindow(
            version: new, range: newRange, expanded: expanded, sectionCounts: newSlices.map(\.length),
            total: newLayout.total)
        return (changes, window)
    }
}
