extension WindowChanges {
    /// Appends the `batch` object of API.md §5, assembled from the items' stored bytes.
    ///
    /// - Complexity: O(*k* + *b*) in the windows' size and the bytes of inserted and updated items.
    public func encodeBatch(into out: inout [UInt8]) {
        out.reserveCapacity(out.count + 64 + 24 * (deletedItemCount + movedItemCount))
        out.append(contentsOf: "{\"deleteSections\":[".utf8)
        var first = true
        for (oldIndex, newIndex) in oldToNew.enumerated() where newIndex < 0 {
            separator(&first, &out)
            JSONWriter.writeInteger(oldIndex, into: &out)
        }
        out.append(contentsOf: "],\"insertSections\":[".utf8)
        first = true
        for (newIndex, oldIndex) in newToOld.enumerated() where oldIndex < 0 {
            separator(&first, &out)
            out.append(contentsOf: "{\"index\":".utf8)
            JSONWriter.writeInteger(newIndex, into: &out)
            out.append(contentsOf: ",\"section\":".utf8)
            new.sections[newIndex].write(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "],\"moveSections\":[".utf8)
        first = true
        for (newIndex, oldIndex) in newToOld.enumerated() where oldIndex >= 0 && !sectionStays[newIndex] {
            separator(&first, &out)
            out.append(contentsOf: "{\"from\":".utf8)
            JSONWriter.writeInteger(oldIndex, into: &out)
            out.append(contentsOf: ",\"to\":".utf8)
            JSONWriter.writeInteger(newIndex, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "],\"deleteItems\":[".utf8)
        first = true
        for (oldIndex, targets) in oldTargets.enumerated() {
            for (itemIndex, target) in targets.enumerated() where target < 0 {
                separator(&first, &out)
                writePath(oldIndex, itemIndex, into: &out)
            }
        }
        out.append(contentsOf: "],\"insertItems\":[".utf8)
        first = true
        forEachSurvivingItem { newIndex, itemIndex, source in
            guard source < 0 else { return }
            separator(&first, &out)
            out.append(contentsOf: "{\"at\":".utf8)
            writePath(newIndex, itemIndex, into: &out)
            out.append(contentsOf: ",\"item\":".utf8)
            new.sections[newIndex].items[itemIndex].write(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "],\"moveItems\":[".utf8)
        first = true
        forEachSurvivingItem { newIndex, itemIndex, source in
            guard source >= 0, !itemStays[newIndex][itemIndex] else { return }
            separator(&first, &out)
            out.append(contentsOf: "{\"from\":".utf8)
            writePath(Self.section(source), Self.item(source), into: &out)
            out.append(contentsOf: ",\"to\":".utf8)
            writePath(newIndex, itemIndex, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "],\"counts\":[".utf8)
        for (index, section) in new.sections.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeInteger(section.items.count, into: &out)
        }
        out.append(contentsOf: "],\"updateItems\":[".utf8)
        first = true
        forEachSurvivingItem { newIndex, itemIndex, source in
            guard source >= 0, itemUpdates[newIndex][itemIndex] else { return }
            separator(&first, &out)
            out.append(contentsOf: "{\"at\":".utf8)
            writePath(newIndex, itemIndex, into: &out)
            out.append(contentsOf: ",\"item\":".utf8)
            new.sections[newIndex].items[itemIndex].write(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "],\"updateSections\":[".utf8)
        first = true
        forEachUpdatedSection { newIndex in
            separator(&first, &out)
            out.append(contentsOf: "{\"index\":".utf8)
            JSONWriter.writeInteger(newIndex, into: &out)
            new.sections[newIndex].writeSupplementaries(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "]}".utf8)
    }

    /// Calls `body` with every item of every surviving new section and where it comes from (-1: inserted).
    func forEachSurvivingItem(_ body: (_ section: Int, _ item: Int, _ source: Int64) -> Void) {
        for (newIndex, sources) in newSources.enumerated() where newToOld[newIndex] >= 0 {
            for (itemIndex, source) in sources.enumerated() { body(newIndex, itemIndex, source) }
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
