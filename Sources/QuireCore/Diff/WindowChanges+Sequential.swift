extension WindowChanges {
    /// Where the items of one surviving section sit while the sequential ops are written: a slot per old
    /// item kept and per item arriving, in the order the section goes through.
    private struct SectionSlots {
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
            out.append(contentsOf: "{\"op\":\"deleteSection\",\"index\":".utf8)
            JSONWriter.writeInteger(oldIndex, into: &out)
            out.append(contentsOf: ",\"id\":".utf8)
            out.append(contentsOf: old.sections[oldIndex].node.quotedID)
            out.append(UInt8(ascii: "}"))
        }
        // 2. Item deletes in surviving sections, last first.
        var survivorIndex = 0
        for (oldIndex, targets) in oldTargets.enumerated() where oldToNew[oldIndex] >= 0 {
            for itemIndex in targets.indices.reversed() where targets[itemIndex] < 0 {
                separator(&first, &out)
                out.append(contentsOf: "{\"op\":\"deleteItem\",\"at\":".utf8)
                writePath(survivorIndex, itemIndex, into: &out)
                out.append(contentsOf: ",\"id\":".utf8)
                out.append(contentsOf: old.sections[oldIndex].items[itemIndex].node.quotedID)
                out.append(UInt8(ascii: "}"))
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
                out.append(contentsOf: "{\"op\":\"insertSection\",\"index\":".utf8)
                JSONWriter.writeInteger(to, into: &out)
                out.append(contentsOf: ",\"section\":".utf8)
                new.sections[target].write(into: &out)
            } else {
                out.append(contentsOf: "{\"op\":\"moveSection\",\"from\":".utf8)
                JSONWriter.writeInteger(from, into: &out)
                out.append(contentsOf: ",\"to\":".utf8)
                JSONWriter.writeInteger(to, into: &out)
                out.append(contentsOf: ",\"id\":".utf8)
                out.append(contentsOf: new.sections[target].node.quotedID)
            }
            out.append(UInt8(ascii: "}"))
        }
        // 4. Item inserts and moves, in the new order.
        var slots = [SectionSlots?](repeating: nil, count: new.sections.count)
        for newIndex in new.sections.indices where newToOld[newIndex] >= 0 {
            slots[newIndex] = makeSlots(newIndex)
        }
        for (newIndex, sources) in newSources.enumerated() where newToOld[newIndex] >= 0 {
            for (itemIndex, source) in sources.enumerated() where !itemStays[newIndex][itemIndex] {
                separator(&first, &out)
                let item = new.sections[newIndex].items[itemIndex]
                let newSlot = slots[newIndex]!.newSlots[itemIndex]
                if source < 0 {
                    let to = slots[newIndex]!.active.prefix(newSlot)
                    slots[newIndex]!.active.add(1, at: newSlot)
                    out.append(contentsOf: "{\"op\":\"insertItem\",\"at\":".utf8)
                    writePath(newIndex, to, into: &out)
                    out.append(contentsOf: ",\"item\":".utf8)
                    item.write(into: &out)
                } else {
                    let sourceSection = oldToNew[Self.section(source)]
                    let oldSlot = slots[sourceSection]!.oldSlots[Self.item(source)]
                    let from = slots[sourceSection]!.active.prefix(oldSlot)
                    slots[sourceSection]!.active.add(-1, at: oldSlot)
                    let to = slots[newIndex]!.active.prefix(newSlot)
                    slots[newIndex]!.active.add(1, at: newSlot)
                    out.append(contentsOf: "{\"op\":\"moveItem\",\"from\":".utf8)
                    writePath(sourceSection, from, into: &out)
                    out.append(contentsOf: ",\"to\":".utf8)
                    writePath(newIndex, to, into: &out)
                    out.append(contentsOf: ",\"id\":".utf8)
                    out.append(contentsOf: item.node.quotedID)
                }
                out.append(UInt8(ascii: "}"))
            }
        }
        // 5. Updates, at final indexes.
        forEachSurvivingItem { newIndex, itemIndex, source in
            guard source >= 0, itemUpdates[newIndex][itemIndex] else { return }
            separator(&first, &out)
            out.append(contentsOf: "{\"op\":\"updateItem\",\"at\":".utf8)
            writePath(newIndex, itemIndex, into: &out)
            out.append(contentsOf: ",\"item\":".utf8)
            new.sections[newIndex].items[itemIndex].write(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        forEachUpdatedSection { newIndex in
            separator(&first, &out)
            out.append(contentsOf: "{\"op\":\"updateSection\",\"index\":".utf8)
            JSONWriter.writeInteger(newIndex, into: &out)
            out.append(contentsOf: ",\"id\":".utf8)
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
