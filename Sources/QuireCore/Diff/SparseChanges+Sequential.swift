extension SparseChanges {
    /// Appends the `sequential` array of openapi.yaml, in the order and with the indexes that
    /// ``WindowChanges/encodeSequential(into:)`` writes.
    ///
    /// - Complexity: O(*p* log *p* + *s*² + *b*) for *p* pieces, *s* sections and *b* bytes of written items.
    public func encodeSequential(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        var first = true
        // 1. Section deletes, last first.
        for oldIndex in oldToNew.indices.reversed() where oldToNew[oldIndex] < 0 {
            separator(&first, &out)
            out.appendLiteral("{\"op\":\"deleteSection\",\"index\":")
            JSONWriter.writeInteger(oldIndex, into: &out)
            out.appendLiteral(",\"id\":")
            out.append(contentsOf: oldSections[oldIndex].quotedID)
            out.append(UInt8(ascii: "}"))
        }
        // 2. Item deletes in surviving sections, last first.
        var survivorIndex = 0
        for (oldIndex, pieces) in oldPieces.enumerated() where oldToNew[oldIndex] >= 0 {
            var index = pieces.reduce(0) { $0 + Self.count(of: $1) }
            for piece in pieces.reversed() {
                guard case .deleted(let items) = piece else {
                    index -= Self.count(of: piece)
                    continue
                }
                for item in items.reversed() {
                    index -= 1
                    separator(&first, &out)
                    out.appendLiteral("{\"op\":\"deleteItem\",\"at\":")
                    writePath(survivorIndex, index, into: &out)
                    out.appendLiteral(",\"id\":")
                    item.writeQuotedID(into: &out)
                    out.append(UInt8(ascii: "}"))
                }
            }
            survivorIndex += 1
        }
        // 3. Section inserts (sections never move here).
        WindowChanges.writeSectionPlacement(
            oldToNew: oldToNew, newToOld: newToOld, stays: { _ in true }, first: &first, into: &out,
            section: { insertedSections[$0]!.write(into: &$1) }, quotedID: { newSections[$0].quotedID })
        // 4. Item inserts and moves, in the new order.
        writeItemPlacement(first: &first, into: &out)
        // 5. Updates, at final indexes.
        forEachUpdatedItem { section, index, item in
            separator(&first, &out)
            out.appendLiteral("{\"op\":\"updateItem\",\"at\":")
            writePath(section, index, into: &out)
            out.appendLiteral(",\"item\":")
            item.write(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        for newIndex in newSections.indices where isUpdated(section: newIndex) {
            separator(&first, &out)
            out.appendLiteral("{\"op\":\"updateSection\",\"index\":")
            JSONWriter.writeInteger(newIndex, into: &out)
            out.appendLiteral(",\"id\":")
            out.append(contentsOf: newSections[newIndex].quotedID)
            newSections[newIndex].writeSupplementaries(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }

    private static func count(of piece: OldPiece) -> Int {
        switch piece {
        case .stays(let count): count
        case .deleted(let items): items.count
        case .leaves: 1
        }
    }

    /// The slots of ``WindowChanges``' item placement, one per piece instead of one per item: a run that
    /// stays is one slot holding its items, a run of arriving items one slot that fills up in order. An
    /// item's index at any moment is the number of items in the slots before its own, plus, in a slot that
    /// fills up, the items already placed in it.
    private struct Slots {
        var occupied: FenwickTree
        var weights: [Int32]
        /// Slot of each new piece (-1 for none).
        var newSlots: [Int]
        /// Slot of each old piece (-1 for deleted pieces).
        var oldSlots: [Int]
    }

    private func writeItemPlacement(first: inout Bool, into out: inout [UInt8]) {
        var slots: [Slots?] = Array(repeating: nil, count: newSections.count)
        for newIndex in newSections.indices where newToOld[newIndex] >= 0 {
            slots[newIndex] = makeSlots(newIndex)
        }
        for (newIndex, pieces) in newPieces.enumerated() where newToOld[newIndex] >= 0 {
            for (pieceIndex, piece) in pieces.enumerated() {
                switch piece {
                case .stays:
                    continue
                case .inserted(let items):
                    let slot = slots[newIndex]!.newSlots[pieceIndex]
                    for item in items {
                        let to = place(in: &slots[newIndex]!, slot: slot)
                        separator(&first, &out)
                        out.appendLiteral("{\"op\":\"insertItem\",\"at\":")
                        writePath(newIndex, to, into: &out)
                        out.appendLiteral(",\"item\":")
                        item.write(into: &out)
                        out.append(UInt8(ascii: "}"))
                    }
                case .moved(let item, let oldSection, _, let oldPiece, _):
                    let sourceSection = oldToNew[oldSection]
                    let oldSlot = slots[sourceSection]!.oldSlots[oldPiece]
                    let from = slots[sourceSection]!.occupied.prefix(oldSlot)
                    slots[sourceSection]!.occupied.add(-1, at: oldSlot)
                    slots[sourceSection]!.weights[oldSlot] -= 1
                    let to = place(in: &slots[newIndex]!, slot: slots[newIndex]!.newSlots[pieceIndex])
                    separator(&first, &out)
                    out.appendLiteral("{\"op\":\"moveItem\",\"from\":")
                    writePath(sourceSection, from, into: &out)
                    out.appendLiteral(",\"to\":")
                    writePath(newIndex, to, into: &out)
                    out.appendLiteral(",\"id\":")
                    item.writeQuotedID(into: &out)
                    out.append(UInt8(ascii: "}"))
                }
            }
        }
    }

    /// Places one item at the end of what `slot` holds; returns its index.
    private func place(in slots: inout Slots, slot: Int) -> Int {
        let to = slots.occupied.prefix(slot) + Int(slots.weights[slot])
        slots.occupied.add(1, at: slot)
        slots.weights[slot] += 1
        return to
    }

    /// Numbers the slots of a surviving section: arriving pieces before its first staying piece, then its
    /// old pieces in old order, each staying one followed by the pieces arriving right after it.
    private func makeSlots(_ newIndex: Int) -> Slots {
        let newSide = newPieces[newIndex]
        let oldSide = oldPieces[newToOld[newIndex]]
        var weights: [Int32] = []
        var newSlots = [Int](repeating: -1, count: newSide.count)
        var oldSlots = [Int](repeating: -1, count: oldSide.count)
        var next = 0
        func arrivals() {
            while next < newSide.count {
                if case .stays = newSide[next] { return }
                newSlots[next] = weights.count
                weights.append(0)
                next += 1
            }
        }
        arrivals()
        for (pieceIndex, piece) in oldSide.enumerated() {
            switch piece {
            case .deleted:
                continue
            case .leaves:
                oldSlots[pieceIndex] = weights.count
                weights.append(1)
            case .stays(let count):
                oldSlots[pieceIndex] = weights.count
                newSlots[next] = weights.count
                weights.append(Int32(count))
                next += 1
                arrivals()
            }
        }
        return Slots(occupied: FenwickTree(counts: weights), weights: weights, newSlots: newSlots, oldSlots: oldSlots)
    }
}

extension WindowItem {
    /// Appends the item's id as a JSON string.
    func writeQuotedID(into out: inout [UInt8]) {
        withUnsafePointer(to: self) { Self.writeQuotedID(at: $0, into: &out) }
    }
}
