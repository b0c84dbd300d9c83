extension WindowChanges {
    /// Where the items of one surviving section sit while the sequential ops are written: a slot per old
    /// item kept and per item arriving, in the order the section goes through.
    private struct SectionSlots {
        /// Which slots hold an item now.
        var active: FenwickTree
        /// Per old item: its slot, or -1 when deleted.
        let oldSlots: [Int]
        /// Per new item: its slot.
        let newSlots: [Int]
    }

    /// Appends the `sequential` array of API.md §5: one operation at a time, each op's indexes referring
    /// to the state the previous op left. Section deletes, item deletes, section inserts and moves, item
    /// inserts and moves, then updates.
    ///
    /// - Complexity: O(*k* + *m* log *k* + *s*²) for *m* operations on windows of *k* items and *s* sections.
    public func encodeSequential(into out: inout [UInt8]) {
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
        for oldIndex in oldTargets.indices where oldToNew[oldIndex] >= 0 {
            let targets = oldTargets[oldIndex]
            old.sections[oldIndex].items.withUnsafeBufferPointer { items in
                for itemIndex in targets.indices.reversed() where targets[itemIndex] < 0 {
                    separator(&first, &out)
                    out.appendLiteral("{\"op\":\"deleteItem\",\"at\":")
                    writePath(survivorIndex, itemIndex, into: &out)
                    out.appendLiteral(",\"id\":")
                    items[itemIndex].writeQuotedID(into: &out)
                    out.append(UInt8(ascii: "}"))
                }
            }
            survivorIndex += 1
        }
        // 3. Sections into their new order: inserts and moves, each placed after its settled predecessor.
        var current = oldToNew.filter { $0 >= 0 }
        for target in new.sections.indices {
            let isInserted = newToOld[target] < 0
            if !isInserted, sectionStays[target] { continue }
            var from = -1
            if !isInserted {
                from = current.firstIndex(of: target)!
                current.remove(at: from)
            }
            let to = target == 0 ? 0 : current.firstIndex(of: target - 1)! + 1
            current.insert(target, at: to)
            separator(&first, &out)
            if isInserted {
                out.appendLiteral("{\"op\":\"insertSection\",\"index\":")
                JSONWriter.writeInteger(to, into: &out)
                out.appendLiteral(",\"section\":")
                new.sections[target].write(into: &out)
            } else {
                out.appendLiteral("{\"op\":\"moveSection\",\"from\":")
                JSONWriter.writeInteger(from, into: &out)
                out.appendLiteral(",\"to\":")
                JSONWriter.writeInteger(to, into: &out)
                out.appendLiteral(",\"id\":")
                out.append(contentsOf: new.sections[target].node.quotedID)
            }
            out.append(UInt8(ascii: "}"))
        }
        // 4. Item inserts and moves, in the new order.
        var active = [FenwickTree](repeating: FenwickTree(active: []), count: new.sections.count)
        var oldSlots = [[Int]](repeating: [], count: new.sections.count)
        var newSlots = [[Int]](repeating: [], count: new.sections.count)
        for newIndex in new.sections.indices where newToOld[newIndex] >= 0 {
            let slots = makeSlots(newIndex)
            active[newIndex] = slots.active
            oldSlots[newIndex] = slots.oldSlots
            newSlots[newIndex] = slots.newSlots
        }
        for newIndex in newSources.indices where newToOld[newIndex] >= 0 {
            let sources = newSources[newIndex]
            let stays = itemStays[newIndex]
            let sectionNewSlots = newSlots[newIndex]
            new.sections[newIndex].items.withUnsafeBufferPointer { items in
                for itemIndex in sources.indices where !stays[itemIndex] {
                    separator(&first, &out)
                    let source = sources[itemIndex]
                    let newSlot = sectionNewSlots[itemIndex]
                    if source < 0 {
                        let to = active[newIndex].prefix(newSlot)
                        active[newIndex].add(1, at: newSlot)
                        out.appendLiteral("{\"op\":\"insertItem\",\"at\":")
                        writePath(newIndex, to, into: &out)
                        out.appendLiteral(",\"item\":")
                        items[itemIndex].write(into: &out)
                    } else {
                        let sourceSection = oldToNew[Self.section(source)]
                        let oldSlot = oldSlots[sourceSection][Self.item(source)]
                        let from = active[sourceSection].prefix(oldSlot)
                        active[sourceSection].add(-1, at: oldSlot)
                        let to = active[newIndex].prefix(newSlot)
                        active[newIndex].add(1, at: newSlot)
                        out.appendLiteral("{\"op\":\"moveItem\",\"from\":")
                        writePath(sourceSection, from, into: &out)
                        out.appendLiteral(",\"to\":")
                        writePath(newIndex, to, into: &out)
                        out.appendLiteral(",\"id\":")
                        items[itemIndex].writeQuotedID(into: &out)
                    }
                    out.append(UInt8(ascii: "}"))
                }
            }
        }
        // 5. Updates, at final indexes.
        forEachSurvivingItem { newIndex, itemIndex, source, _, updated in
            guard source >= 0, updated else { return }
            separator(&first, &out)
            out.appendLiteral("{\"op\":\"updateItem\",\"at\":")
            writePath(newIndex, itemIndex, into: &out)
            out.appendLiteral(",\"item\":")
            new.sections[newIndex].items.withUnsafeBufferPointer { $0[itemIndex].write(into: &out) }
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

    /// Slots of a surviving section: items arriving before its first staying item, then every old item
    /// kept (in old order), each staying one followed by the items arriving right after it.
    private func makeSlots(_ newIndex: Int) -> SectionSlots {
        let oldIndex = newToOld[newIndex]
        let targets = oldTargets[oldIndex]
        let stays = itemStays[newIndex]
        var oldSlots = [Int](repeating: -1, count: targets.count)
        var newSlots = [Int](repeating: -1, count: stays.count)
        var activeFlags: [Bool] = []
        activeFlags.reserveCapacity(targets.count + stays.count)
        var next = 0
        while next < stays.count, !stays[next] {
            newSlots[next] = activeFlags.count
            activeFlags.append(false)
            next += 1
        }
        for (itemIndex, target) in targets.enumerated() where target >= 0 {
            let slot = activeFlags.count
            oldSlots[itemIndex] = slot
            activeFlags.append(true)
            let targetItem = Self.item(target)
            guard Self.section(target) == newIndex, stays[targetItem] else { continue }
            newSlots[targetItem] = slot
            var arriving = targetItem + 1
            while arriving < stays.count, !stays[arriving] {
                newSlots[arriving] = activeFlags.count
                activeFlags.append(false)
                arriving += 1
            }
        }
        return SectionSlots(active: FenwickTree(active: activeFlags), oldSlots: oldSlots, newSlots: newSlots)
    }
}
