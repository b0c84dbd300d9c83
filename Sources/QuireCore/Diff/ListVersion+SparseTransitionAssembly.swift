/// The last step of ``ListVersion/sparseTransition(from:expanded:extend:bound:)``: the runs and touched items,
/// located in both windows, assembled into the pieces of the answer, the new side first (section by section,
/// in new order), then the old side (in old order), then the moves that link them.
extension SparseTransitionBuilder {
    /// The new side of the answer as it is assembled, and what the old side and the moves read of it.
    struct NewSide {
        /// Each new section's pieces: runs, touched items and what enters the window.
        var pieces: [[SparseChanges.NewPiece]]
        /// The new sections that match no old one, read whole.
        var insertedSections: [WindowSection?]
        /// The new section each old touched item was found in, or -1.
        var matchedOld: [Int]
        /// The old touched items that stay in place in their section.
        var keptOld: [Bool]
        var counts = (inserted: 0, moved: 0, updated: 0, sectionItems: 0)
        /// Pending moves, resolved once the old pieces are numbered: (new section, piece index, old touched).
        var moves: [(section: Int, piece: Int, touched: Int, stays: Bool)] = []
        /// The next run and the next touched item (in new order) that no section placed yet.
        var runCursor = 0
        var touchedCursor = 0

        init(sections: Int, touched: Int) {
            pieces = Array(repeating: [], count: sections)
            insertedSections = Array(repeating: nil, count: sections)
            matchedOld = [Int](repeating: -1, count: touched)
            keptOld = [Bool](repeating: false, count: touched)
        }
    }

    /// One surviving new section's pieces as they are found, in new order, with those that come from its old
    /// section (what must stay in place).
    struct SectionPieces {
        var pieces: [SparseChanges.NewPiece] = []
        /// The pieces from the section's old section, as increasing runs of their old flat indexes.
        var sameSection: [IncreasingRun] = []
        /// The index in `pieces` of each of `sameSection`.
        var sameSectionPieces: [Int] = []
        /// Piece index → index in `NewSide.moves`.
        var sameSectionMoves: [Int: Int] = [:]
        /// The next position of the new version the section reads.
        var position: Int
    }

    /// The pieces of both windows, the item diff of each surviving section and the counts.
    func assemble(
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
        var side = NewSide(sections: newSlices.count, touched: oldTouched.count)
        for (index, slice) in newSlices.enumerated() {
            guard
                assembleNewSection(
                    index, slice, newToOld: newToOld, runs: runs, oldTouched: oldTouched, newTouched: newTouched,
                    oldByKey: oldByKey, into: &side)
            else { return nil }
        }
        // The old side, section by section, in old order.
        guard
            let (oldPieces, touchedPiece, deletedItems) = assembleOldSide(
                oldSlices: oldSlices, oldBases: oldBases, oldToNew: oldToNew, newRange: newRange, runs: runs,
                oldTouched: oldTouched, matchedOld: side.matchedOld, keptOld: side.keptOld)
        else { return nil }
        // Moves, now that the old pieces are numbered.
        guard resolveMoves(&side, oldTouched: oldTouched, oldBases: oldBases, touchedPiece: touchedPiece) else {
            return nil
        }
        return answer(
            oldSlices: oldSlices, newSlices: newSlices, newRange: newRange, oldToNew: oldToNew, newToOld: newToOld,
            oldPieces: oldPieces, deletedItems: deletedItems, side: side)
    }

    // MARK: - The new side

    /// Assembles the new section `index`: read whole when it matches no old section, else its runs, touched
    /// items and what enters the window, in new order. `false` when a run in it comes from another old section,
    /// a touched item is not where the layout says, or a run would not stay in place.
    private func assembleNewSection(
        _ index: Int, _ slice: SectionSlice, newToOld: [Int], runs: [Run], oldTouched: [OldTouched],
        newTouched: [(position: Int, key: Int32)], oldByKey: [Int32: Int], into side: inout NewSide
    ) -> Bool {
        while side.touchedCursor < newTouched.count && newTouched[side.touchedCursor].position < slice.start {
            side.touchedCursor += 1
        }
        while side.runCursor < runs.count && runs[side.runCursor].position < slice.start { side.runCursor += 1 }
        guard newToOld[index] >= 0 else {
            let items = new.visibleItems(of: slice, layout: newLayout)
            side.insertedSections[index] = WindowSection(
                node: slice.node, offset: slice.offset, count: slice.count, items: items)
            side.counts.sectionItems += items.count
            return true
        }
        let oldSection = newToOld[index]
        // The section's pieces in new order: runs, touched items and what enters the window between them.
        var section = SectionPieces(position: slice.start)
        while section.position < slice.end {
            let nextRun =
                side.runCursor < runs.count && runs[side.runCursor].position < slice.end ? runs[side.runCursor] : nil
            let nextTouched =
                side.touchedCursor < newTouched.count && newTouched[side.touchedCursor].position < slice.end
                ? newTouched[side.touchedCursor] : nil
            if let run = nextRun, run.position <= (nextTouched?.position ?? Int.max) {
                enter(upTo: run.position, &section, &side)
                guard run.oldSection == oldSection else { return false }
                section.sameSection.append(
                    IncreasingRun(low: run.flat, high: run.flat + run.count - 1, weight: run.count))
                section.sameSectionPieces.append(section.pieces.count)
                section.pieces.append(.stays(count: run.count, updated: nil))
                section.position = run.position + run.count
                side.runCursor += 1
            } else if let touched = nextTouched {
                enter(upTo: touched.position, &section, &side)
                side.touchedCursor += 1
                section.position = touched.position + 1
                guard
                    place(
                        touched, in: index, oldSection: oldSection, oldTouched: oldTouched, oldByKey: oldByKey,
                        &section, &side)
                else { return false }
            } else {
                enter(upTo: slice.end, &section, &side)
            }
        }
        guard keepInPlace(&section, &side) else { return false }
        side.pieces[index] = section.pieces
        return true
    }

    /// The items of the new version from the section's position up to `stop`, entering the window.
    private func enter(upTo stop: Int, _ section: inout SectionPieces, _ side: inout NewSide) {
        guard stop > section.position else { return }
        let items = readItems(of: new, layout: newLayout, positions: section.position..<stop)
        side.counts.inserted += items.count
        section.pieces.append(.inserted(items))
        section.position = stop
    }

    /// A touched item of the new section `index`: inserted when the old window did not hold it in a surviving
    /// section, else moved there (its move resolved later); `false` when it is not where the layout says.
    private func place(
        _ touched: (position: Int, key: Int32), in index: Int, oldSection: Int, oldTouched: [OldTouched],
        oldByKey: [Int32: Int], _ section: inout SectionPieces, _ side: inout NewSide
    ) -> Bool {
        guard let item = new.visibleItem(at: touched.position, layout: newLayout), item.key == touched.key else {
            return false
        }
        guard let oldIndex = oldByKey[touched.key] else {
            side.counts.inserted += 1
            section.pieces.append(.inserted([item]))
            return true
        }
        let source = oldTouched[oldIndex]
        side.matchedOld[oldIndex] = index
        let updated = source.item.hash != item.hash
        if updated { side.counts.updated += 1 }
        if source.oldSection == oldSection {
            section.sameSection.append(IncreasingRun(low: source.flat, high: source.flat, weight: 1))
            section.sameSectionPieces.append(section.pieces.count)
        }
        section.sameSectionMoves[section.pieces.count] = side.moves.count
        side.moves.append((index, section.pieces.count, oldIndex, false))
        section.pieces.append(.moved(item, section: source.oldSection, index: -1, piece: -1, updated: updated))
        return true
    }

    /// The pieces of a section that stay in place: those a longest increasing subsequence of its pieces from its
    /// old section keeps, touched items turned into pieces that stay. `false` when a run would not be kept.
    private func keepInPlace(_ section: inout SectionPieces, _ side: inout NewSide) -> Bool {
        // Runs that stay must be the ones a longest increasing subsequence keeps.
        guard let mask = longestIncreasingSubsequenceMask(runs: section.sameSection) else { return false }
        for (position, pieceIndex) in section.sameSectionPieces.enumerated() {
            switch section.pieces[pieceIndex] {
            case .stays:
                guard mask[position] else { return false }
            case .moved(let item, _, _, _, let updated) where mask[position]:
                // Safe: every moved piece has its move, recorded as the piece was appended (``place``).
                let moveIndex = section.sameSectionMoves[pieceIndex]!
                side.keptOld[side.moves[moveIndex].touched] = true
                side.moves[moveIndex].stays = true
                section.pieces[pieceIndex] = .stays(count: 1, updated: updated ? item : nil)
            default:
                break
            }
        }
        return true
    }

    // MARK: - The old side and the moves

    /// The old side of the answer, section by section in old order: the pieces of each surviving section (its
    /// runs, staying or deleted, and its touched items, deleted, staying or leaving), the piece of each touched
    /// item, and the count of items deleted. `nil` when an item of a surviving section is neither touched nor in
    /// a run.
    private func assembleOldSide(
        oldSlices: [SectionSlice], oldBases: [Int], oldToNew: [Int], newRange: Range<Int>, runs: [Run],
        oldTouched: [OldTouched], matchedOld: [Int], keptOld: [Bool]
    ) -> (pieces: [[SparseChanges.OldPiece]], touchedPiece: [Int], deletedItems: Int)? {
        var oldPieces: [[SparseChanges.OldPiece]] = Array(repeating: [], count: oldSlices.count)
        var touchedPiece = [Int](repeating: -1, count: oldTouched.count)
        var deletedItems = 0
        var touchedCursor = 0
        var runCursor = 0
        let runsByFlat = runs.sorted { $0.flat < $1.flat }
        for (section, slice) in oldSlices.enumerated() {
            let end = oldBases[section] + slice.length
            guard oldToNew[section] >= 0 else {
                while touchedCursor < oldTouched.count && oldTouched[touchedCursor].flat < end { touchedCursor += 1 }
                while runCursor < runsByFlat.count && runsByFlat[runCursor].flat < end { runCursor += 1 }
                continue
            }
            var pieces: [SparseChanges.OldPiece] = []
            var flat = oldBases[section]
            while flat < end {
                if touchedCursor < oldTouched.count && oldTouched[touchedCursor].flat == flat {
                    let index = touchedCursor
                    touchedCursor += 1
                    flat += 1
                    if matchedOld[index] < 0 {
                        deletedItems += 1
                        pieces.append(.deleted([oldTouched[index].item]))
                    } else {
                        touchedPiece[index] = pieces.count
                        pieces.append(keptOld[index] ? .stays(count: 1) : .leaves)
                    }
                } else if runCursor < runsByFlat.count && runsByFlat[runCursor].flat == flat {
                    let run = runsByFlat[runCursor]
                    runCursor += 1
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
        return (oldPieces, touchedPiece, deletedItems)
    }

    /// Gives each move that does not stay in place the old piece it comes from, and counts them; `false` when a
    /// move's piece is not a move.
    private func resolveMoves(
        _ side: inout NewSide, oldTouched: [OldTouched], oldBases: [Int], touchedPiece: [Int]
    ) -> Bool {
        side.moves.removeAll { $0.stays }
        for move in side.moves {
            let touched = oldTouched[move.touched]
            guard case .moved(let item, let section, _, _, let updated) = side.pieces[move.section][move.piece] else {
                return false
            }
            side.pieces[move.section][move.piece] = .moved(
                item, section: section, index: touched.flat - oldBases[section], piece: touchedPiece[move.touched],
                updated: updated)
        }
        side.counts.moved = side.moves.count
        return true
    }

    // MARK: - The answer

    /// The changes, with their counts, and the new window.
    private func answer(
        oldSlices: [SectionSlice], newSlices: [SectionSlice], newRange: Range<Int>, oldToNew: [Int],
        newToOld: [Int], oldPieces: [[SparseChanges.OldPiece]], deletedItems: Int, side: NewSide
    ) -> (SparseChanges, SessionWindow) {
        var updatedSections = 0
        for (newIndex, oldIndex) in newToOld.enumerated() where oldIndex >= 0 {
            if oldSlices[oldIndex].node.supplementaryHash != newSlices[newIndex].node.supplementaryHash {
                updatedSections += 1
            }
        }
        let changes = SparseChanges(
            oldSections: oldSlices.map(\.node), newSections: newSlices.map(\.node),
            insertedSections: side.insertedSections, newLengths: newSlices.map(\.length), oldToNew: oldToNew,
            newToOld: newToOld, oldPieces: oldPieces, newPieces: side.pieces, newCount: newRange.count,
            deletedSectionCount: oldToNew.filter { $0 < 0 }.count,
            insertedSectionCount: newToOld.filter { $0 < 0 }.count, updatedSectionCount: updatedSections,
            deletedItemCount: deletedItems, insertedItemCount: side.counts.inserted, movedItemCount: side.counts.moved,
            updatedItemCount: side.counts.updated, insertedSectionItemCount: side.counts.sectionItems)
        let window = SessionWindow(
            version: new, range: newRange, expanded: expanded, sectionCounts: newSlices.map(\.length),
            total: newLayout.total)
        return (changes, window)
    }
}
