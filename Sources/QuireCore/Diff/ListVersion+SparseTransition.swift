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

// MARK: - The builder

/// The steps of ``ListVersion/sparseTransition(from:expanded:extend:bound:)``. Positions are visible positions;
/// "flat" indexes count the old window's items across its sections. Internal rather than private so that its
/// last step, the assembly of the answer (`ListVersion+SparseTransitionAssembly.swift`), extends it.
struct SparseTransitionBuilder {
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
        // The old window's sections, which of them still exist, and the touched items.
        let (start, end, oldSlices) = old.sectionSlices(range: base.range, layout: oldLayout)
        guard start == base.range.lowerBound, end == base.range.upperBound,
            let (oldBases, oldSectionExists) = oldSections(oldSlices, delta: delta),
            let (oldTouched, newTouched) = touchedItems(delta, oldBases: oldBases)
        else { return nil }

        // Untouched runs of the sections that still exist, located in the new version.
        guard var runs = locateRuns(oldSlices, oldBases, oldSectionExists, oldTouched) else { return nil }
        guard splitRuns(&runs, at: newTouched.map(\.position)), runs.allSatisfy(isWhole) else { return nil }

        // The new window's run of positions, as window(following:) finds it.
        let (survivors, isRun) = survivingRuns(of: runs, among: oldTouched)
        guard let kept = longestIncreasingSubsequenceMask(runs: survivors),
            zip(kept, isRun).allSatisfy({ $0 || !$1 })
        else { return nil }
        let keptRange = keptEnds(of: survivors, kept: kept)
        let newRange = bound.range(kept: keptRange, old: base.range, total: newLayout.total, extend: extend)

        // The new window's sections, matched with the old ones.
        let (newStart, newEnd, newSlices) = new.sectionSlices(range: newRange, layout: newLayout)
        guard let (oldToNew, newToOld) = matchSections(oldSlices, newSlices) else { return nil }

        // Runs cut at the window's ends: each part is inside the new window or outside it.
        splitRuns(&runs, atBoundaries: [newStart, newEnd])
        return assemble(
            oldSlices: oldSlices, oldBases: oldBases, newSlices: newSlices, newRange: newStart..<newEnd,
            oldToNew: oldToNew, newToOld: newToOld, runs: runs, oldTouched: oldTouched, newTouched: newTouched)
    }

    // MARK: - The steps of a build

    /// Where each old section starts among the old window's flat indexes (with the end of the last), and whether
    /// it still exists; `nil` when a section was removed and created again.
    private func oldSections(_ slices: [SectionSlice], delta: CombinedDelta) -> (bases: [Int], exists: [Bool])? {
        var oldBases: [Int] = []
        oldBases.reserveCapacity(slices.count + 1)
        var flatTotal = 0
        var oldSectionExists: [Bool] = []
        for slice in slices {
            oldBases.append(flatTotal)
            flatTotal += slice.length
            let exists = new.sectionIndex.value(for: slice.node.key) != nil
            // A section removed and created again holds other items under the same key: diff it whole.
            if exists && delta.replacedSections.contains(slice.node.key) { return nil }
            oldSectionExists.append(exists)
        }
        oldBases.append(flatTotal)
        return (oldBases, oldSectionExists)
    }

    /// The touched items: where they were in the old window (by flat index), where they are now (by position);
    /// `nil` when one of the old window is not where its layout says.
    private func touchedItems(_ delta: CombinedDelta, oldBases: [Int])
        -> (old: [OldTouched], new: [(position: Int, key: Int32)])?
    {
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
        return (oldTouched, newTouched)
    }

    /// The runs and the touched items that stand in the new version, in the old window's order, as increasing
    /// runs of their new positions, and which of them are runs.
    private func survivingRuns(of runs: [Run], among oldTouched: [OldTouched]) -> ([IncreasingRun], [Bool]) {
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
        return (survivors, isRun)
    }

    /// The ends of the positions the new window keeps, from the survivors a longest increasing subsequence keeps
    /// (`kept`); `nil` when it keeps none.
    private func keptEnds(of survivors: [IncreasingRun], kept: [Bool]) -> (start: Int, end: Int)? {
        let keptRuns = survivors.indices.filter { kept[$0] }.map { survivors[$0] }
        guard let first = keptRuns.first, let last = keptRuns.last else { return nil }
        // The same positions window(following:) keeps, read from the runs (a run of n holds n positions).
        let second = first.high > first.low ? first.low + 1 : keptRuns.dropFirst().first?.low
        let penultimate = last.high > last.low ? last.high - 1 : keptRuns.dropLast().last?.high
        let neighbours = base.neighbours(in: new, layout: oldLayout)
        return WindowBound.keptEnds(
            first: first.low, second: second, penultimate: penultimate, last: last.high,
            before: neighbours.before.flatMap { newLayout.position(of: $0) },
            after: neighbours.after.flatMap { newLayout.position(of: $0) })
    }

    /// The new window's sections matched with the old window's by key, both ways (-1: no match); `nil` when the
    /// sections matched are not in the same order in both.
    private func matchSections(_ oldSlices: [SectionSlice], _ newSlices: [SectionSlice])
        -> (oldToNew: [Int], newToOld: [Int])?
    {
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
        return (oldToNew, newToOld)
    }

    // MARK: - Runs

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

    // MARK: - Reading items

    /// Where the old window's item at `flat` stands in the new version.
    private func newPosition(ofOld flat: Int) -> Int? {
        guard let item = old.visibleItem(at: oldStart + flat, layout: oldLayout) else { return nil }
        return newLayout.position(of: item.key)
    }

    /// The old window's items `flat ..< flat + count`, read.
    func oldItems(_ flat: Int, _ count: Int) -> [WindowItem] {
        readItems(of: old, layout: oldLayout, positions: (oldStart + flat)..<(oldStart + flat + count))
    }

    /// Items at the given positions of a version (inside one section).
    func readItems(of version: ListVersion, layout: VisibleLayout, positions: Range<Int>) -> [WindowItem] {
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
}
