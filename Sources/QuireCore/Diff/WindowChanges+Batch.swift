extension WindowChanges {
    /// Appends the `batch` object of API.md §5, assembled from the items' stored bytes.
    ///
    /// - Complexity: O(*k* + *b*) in the windows' size and the bytes of inserted and updated items.
    public func encodeBatch(into out: inout [UInt8]) {
        out.reserveCapacity(out.count + 64 + 24 * (deletedItemCount + movedItemCount))
        out.appendLiteral("{\"deleteSections\":[")
        var first = true
        for (oldIndex, newIndex) in oldToNew.enumerated() where newIndex < 0 {
            separator(&first, &out)
            JSONWriter.writeInteger(oldIndex, into: &out)
        }
        out.appendLiteral("],\"insertSections\":[")
        first = true
        for (newIndex, oldIndex) in newToOld.enumerated() where oldIndex < 0 {
            separator(&first, &out)
            out.appendLiteral("{\"index\":")
            JSONWriter.writeInteger(newIndex, into: &out)
            out.appendLiteral(",\"section\":")
            new.sections[newIndex].write(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"moveSections\":[")
        first = true
        for (newIndex, oldIndex) in newToOld.enumerated() where oldIndex >= 0 && !sectionStays[newIndex] {
            separator(&first, &out)
            out.appendLiteral("{\"from\":")
            JSONWriter.writeInteger(oldIndex, into: &out)
            out.appendLiteral(",\"to\":")
            JSONWriter.writeInteger(newIndex, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"deleteItems\":[")
        first = true
        for oldIndex in oldTargets.indices {
            let targets = oldTargets[oldIndex]
            for itemIndex in targets.indices where targets[itemIndex] < 0 {
                separator(&first, &out)
                writePath(oldIndex, itemIndex, into: &out)
            }
        }
        out.appendLiteral("],\"insertItems\":[")
        first = true
        forEachSurvivingItem { newIndex, itemIndex, source, _, _ in
            guard source < 0 else { return }
            separator(&first, &out)
            out.appendLiteral("{\"at\":")
            writePath(newIndex, itemIndex, into: &out)
            out.appendLiteral(",\"item\":")
            new.sections[newIndex].items.withUnsafeBufferPointer { $0[itemIndex].write(into: &out) }
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"moveItems\":[")
        first = true
        forEachSurvivingItem { newIndex, itemIndex, source, stays, _ in
            guard source >= 0, !stays else { return }
            separator(&first, &out)
            out.appendLiteral("{\"from\":")
            writePath(Self.section(source), Self.item(source), into: &out)
            out.appendLiteral(",\"to\":")
            writePath(newIndex, itemIndex, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"counts\":[")
        for (index, section) in new.sections.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeInteger(section.items.count, into: &out)
        }
        out.appendLiteral("],\"updateItems\":[")
        first = true
        forEachSurvivingItem { newIndex, itemIndex, source, _, updated in
            guard source >= 0, updated else { return }
            separator(&first, &out)
            out.appendLiteral("{\"at\":")
            writePath(newIndex, itemIndex, into: &out)
            out.appendLiteral(",\"item\":")
            new.sections[newIndex].items.withUnsafeBufferPointer { $0[itemIndex].write(into: &out) }
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"updateSections\":[")
        first = true
        forEachUpdatedSection { newIndex in
            separator(&first, &out)
            out.appendLiteral("{\"index\":")
            JSONWriter.writeInteger(newIndex, into: &out)
            new.sections[newIndex].writeSupplementaries(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("]}")
    }

    /// Calls `body` with every item of every surviving new section: where it comes from (-1: inserted),
    /// whether it stays in place and whether its content changed.
    func forEachSurvivingItem(
        _ body: (_ section: Int, _ item: Int, _ source: Int64, _ stays: Bool, _ updated: Bool) -> Void
    ) {
        for newIndex in newSources.indices where newToOld[newIndex] >= 0 {
            let sources = newSources[newIndex]
            let stays = itemStays[newIndex]
            let updates = itemUpdates[newIndex]
            for itemIndex in sources.indices {
                body(newIndex, itemIndex, sources[itemIndex], stays[itemIndex], updates[itemIndex])
            }
        }
    }

    /// Calls `body` with the new index of every surviving section whose header or footer changed.
    func forEachUpdatedSection(_ body: (Int) -> Void) {
        for (newIndex, oldIndex) in newToOld.enumerated() where oldIndex >= 0 {
            if old.sections[oldIndex].node.supplementaryHash != new.sections[newIndex].node.supplementaryHash {
                body(newIndex)
            }
        }
    }

    func separator(_ first: inout Bool, _ out: inout [UInt8]) {
        if first { first = false } else { out.append(UInt8(ascii: ",")) }
    }

    func writePath(_ section: Int, _ item: Int, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        JSONWriter.writeInteger(section, into: &out)
        out.append(UInt8(ascii: ","))
        JSONWriter.writeInteger(item, into: &out)
        out.append(UInt8(ascii: "]"))
    }
}
