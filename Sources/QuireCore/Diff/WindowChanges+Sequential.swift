extension WindowChanges {
    /// Appends the `sequential` array of openapi.yaml: one operation at a time, each op's indexes referring
    /// to the state the previous op left. Section deletes, item deletes, section inserts and moves, item
    /// inserts and moves, then updates.
    ///
    /// - Complexity: O(*k* + *m* log *k* + *s*²) for *m* operations on windows of *k* items and *s* sections.
    public func encodeSequential(into out: inout [UInt8]) {
        out.reserveCapacity(out.count + 256 + 40 * (deletedItemCount + movedItemCount))
        out.append(UInt8(ascii: "["))
        var first = true
        // 1. Section deletes, last first.
        for oldIndex in oldToNew.indices.reversed() where oldToNew[oldIndex] < 0 {
            separator(&first, &out)
            out.appendLiteral("{\"op\":\"deleteSection\",\"index\":")
            JSONWriter.writeInteger(oldIndex, into: &out)
            out.appendLiteral(",\"id\":")
            out.append(contentsOf: old.sections[oldIndex].node.quotedID)
            out.append(UInt8(ascii: "}"))
        }
        // 2. Item deletes in surviving sections, last first.
        var survivorIndex = 0
        oldTargets.withUnsafeBufferPointer { targets in
            for oldIndex in oldToNew.indices where oldToNew[oldIndex] >= 0 {
                let base = oldBase[oldIndex]
                old.sections[oldIndex].items.withUnsafeBufferPointer { items in
                    for index in items.indices.reversed() where targets[base + index] == -1 {
                        separator(&first, &out)
                        out.appendLiteral("{\"op\":\"deleteItem\",\"at\":")
                        writePath(survivorIndex, index, into: &out)
                        out.appendLiteral(",\"id\":")
                        WindowItem.writeQuotedID(at: items.baseAddress! + index, into: &out)
                        out.append(UInt8(ascii: "}"))
                    }
                }
                survivorIndex += 1
            }
        }
        writeSectionPlacement(first: &first, into: &out)
        writeItemPlacement(first: &first, into: &out)
        // 5. Updates, at final indexes.
        forEachSurvivingItem { newIndex, index, _, flags, items in
            guard flags & Self.updated != 0 else { return }
            separator(&first, &out)
            out.appendLiteral("{\"op\":\"updateItem\",\"at\":")
            writePath(newIndex, index, into: &out)
            out.appendLiteral(",\"item\":")
            WindowItem.write(at: items.baseAddress! + index, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        forEachUpdatedSection { newIndex in
            separator(&first, &out)
            out.appendLiteral("{\"op\":\"updateSection\",\"index\":")
            JSONWriter.writeInteger(newIndex, into: &out)
            out.appendLiteral(",\"id\":")
            out.append(contentsOf: new.sections[newIndex].node.quotedID)
            new.sections[newIndex].writeSupplementaries(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }

    /// 3. Sections into their new order: inserts and moves.
    private func writeSectionPlacement(first: inout Bool, into out: inout [UInt8]) {
        Self.writeSectionPlacement(
            oldToNew: oldToNew, newToOld: newToOld, stays: { sectionStays[$0] }, first: &first, into: &out,
            section: { new.sections[$0].write(into: &$1) }, quotedID: { new.sections[$0].node.quotedID })
    }

    /// 3. Sections into their new order: inserts and moves, each placed right after its predecessor in the
    /// new order (which is already in place), so the sections that stay never move. Shared by both diffs.
    static func writeSectionPlacement(
        oldToNew: [Int], newToOld: [Int], stays: (Int) -> Bool, first: inout Bool, into out: inout [UInt8],
        section writeSection: (Int, inout [UInt8]) -> Void, quotedID: (Int) -> [UInt8]
    ) {
        var current = oldToNew.filter { $0 >= 0 }
        for target in newToOld.indices {
            let isInserted = newToOld[target] < 0
            if !isInserted, stays(target) { continue }
            var from = -1
            if !isInserted {
                from = current.firstIndex(of: target)!
                current.remove(at: from)
            }
            let to = target == 0 ? 0 : current.firstIndex(of: target - 1)! + 1
            current.insert(target, at: to)
            if first { first = false } else { out.append(UInt8(ascii: ",")) }
            if isInserted {
                out.appendLiteral("{\"op\":\"insertSection\",\"index\":")
                JSONWriter.writeInteger(to, into: &out)
                out.appendLiteral(",\"section\":")
                writeSection(target, &out)
            } else {
                out.appendLiteral("{\"op\":\"moveSection\",\"from\":")
                JSONWriter.writeInteger(from, into: &out)
                out.appendLiteral(",\"to\":")
                JSONWriter.writeInteger(to, into: &out)
                out.appendLiteral(",\"id\":")
                out.append(contentsOf: quotedID(target))
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// 4. Item inserts and moves, in the new order. Each surviving section gets a slot per old item kept
    /// and per item arriving, in the order the section passes through: items arriving before its first
    /// staying item, then its old items in old order, each staying one followed by the items arriving right
    /// after it. An item's index at any moment is the number of occupied slots before its own.
    private func writeItemPlacement(first: inout Bool, into out: inout [UInt8]) {
        var oldSlots = [Int32](repeating: -1, count: oldTargets.count)
        var newSlots = [Int32](repeating: -1, count: newSources.count)
        var occupied = [FenwickTree](repeating: FenwickTree(counts: []), count: new.sections.count)
        for newIndex in new.sections.indices where newToOld[newIndex] >= 0 {
            occupied[newIndex] = makeSlots(newIndex, oldSlots: &oldSlots, newSlots: &newSlots)
        }
        forEachSurvivingItem { newIndex, index, source, flags, items in
            guard flags & Self.stays == 0 else { return }
            separator(&first, &out)
            let newSlot = Int(newSlots[newBase[newIndex] + index])
            if source < 0 {
                let to = occupied[newIndex].prefix(newSlot)
                occupied[newIndex].add(1, at: newSlot)
                out.appendLiteral("{\"op\":\"insertItem\",\"at\":")
                writePath(newIndex, to, into: &out)
                out.appendLiteral(",\"item\":")
                WindowItem.write(at: items.baseAddress! + index, into: &out)
            } else {
                let sourceSection = oldToNew[oldPath(Int(source)).section]
                let oldSlot = Int(oldSlots[Int(source)])
                let from = occupied[sourceSection].prefix(oldSlot)
                occupied[sourceSection].add(-1, at: oldSlot)
                let to = occupied[newIndex].prefix(newSlot)
                occupied[newIndex].add(1, at: newSlot)
                out.appendLiteral("{\"op\":\"moveItem\",\"from\":")
                writePath(sourceSection, from, into: &out)
                out.appendLiteral(",\"to\":")
                writePath(newIndex, to, into: &out)
                out.appendLiteral(",\"id\":")
                WindowItem.writeQuotedID(at: items.baseAddress! + index, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Numbers the slots of a surviving section (see ``writeItemPlacement(first:into:)``) and returns
    /// which are occupied before its inserts and moves.
    private func makeSlots(_ newIndex: Int, oldSlots: inout [Int32], newSlots: inout [Int32]) -> FenwickTree {
        let oldIndex = newToOld[newIndex]
        let oldStart = oldBase[oldIndex]
        let oldEnd = oldBase[oldIndex + 1]
        let newStart = newBase[newIndex]
        let newCount = newBase[newIndex + 1] - newStart
        var occupied = [Int32](repeating: 0, count: oldEnd - oldStart + newCount)
        var slot = 0
        newFlags.withUnsafeBufferPointer { flags in
            oldTargets.withUnsafeBufferPointer { targets in
                oldSlots.withUnsafeMutableBufferPointer { oldSlots in
                    newSlots.withUnsafeMutableBufferPointer { newSlots in
                        occupied.withUnsafeMutableBufferPointer { occupied in
                            var next = newStart
                            let newEnd = newStart + newCount
                            while next < newEnd, flags[next] & Self.stays == 0 {
                                newSlots[next] = Int32(slot)
                                slot += 1
                                next += 1
                            }
                            for flat in oldStart..<oldEnd where targets[flat] >= 0 {
                                oldSlots[flat] = Int32(slot)
                                occupied[slot] = 1
                                let target = Int(targets[flat])
                                let staysHere = target >= newStart && target < newEnd && flags[target] & Self.stays != 0
                                if staysHere { newSlots[target] = Int32(slot) }
                                slot += 1
                                guard staysHere else { continue }
                                var arriving = target + 1
                                while arriving < newEnd, flags[arriving] & Self.stays == 0 {
                                    newSlots[arriving] = Int32(slot)
                                    slot += 1
                                    arriving += 1
                                }
                            }
                        }
                    }
                }
            }
        }
        occupied.removeLast(occupied.count - slot)
        return FenwickTree(counts: occupied)
    }
}
