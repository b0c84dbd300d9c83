extension WindowChanges {
    /// Appends the `batch` object of openapi.yaml, assembled from the items' stored bytes.
    ///
    /// - Complexity: O(*k* + *b*) in the windows' size and the bytes of inserted and updated items.
    public func encodeBatch(into out: inout [UInt8]) {
        out.reserveCapacity(out.count + 256 + 24 * (deletedItemCount + 2 * movedItemCount))
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
        oldTargets.withUnsafeBufferPointer { targets in
            for oldIndex in oldToNew.indices where oldToNew[oldIndex] >= 0 {
                let base = oldBase[oldIndex]
                for flat in base..<oldBase[oldIndex + 1] where targets[flat] == -1 {
                    separator(&first, &out)
                    writePath(oldIndex, flat - base, into: &out)
                }
            }
        }
        out.appendLiteral("],\"insertItems\":[")
        first = true
        forEachSurvivingItem { newIndex, index, source, _, items in
            guard source == -1 else { return }
            separator(&first, &out)
            out.appendLiteral("{\"at\":")
            writePath(newIndex, index, into: &out)
            out.appendLiteral(",\"item\":")
            WindowItem.write(at: items.baseAddress! + index, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"moveItems\":[")
        first = true
        forEachSurvivingItem { newIndex, index, source, flags, _ in
            guard source >= 0, flags & Self.stays == 0 else { return }
            separator(&first, &out)
            out.appendLiteral("{\"from\":")
            let from = oldPath(Int(source))
            writePath(from.section, from.item, into: &out)
            out.appendLiteral(",\"to\":")
            writePath(newIndex, index, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"counts\":[")
        for (index, section) in new.sections.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeInteger(section.items.count, into: &out)
        }
        out.appendLiteral("],\"updateItems\":[")
        first = true
        forEachSurvivingItem { newIndex, index, _, flags, items in
            guard flags & Self.updated != 0 else { return }
            separator(&first, &out)
            out.appendLiteral("{\"at\":")
            writePath(newIndex, index, into: &out)
            out.appendLiteral(",\"item\":")
            WindowItem.write(at: items.baseAddress! + index, into: &out)
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

    /// Calls `body` with every item of every surviving new section that is not simply staying: its section
    /// and index, where it comes from (flat old index, -1: inserted), its flags, and its section's items
    /// (read in place: copying an item would retain its node, a cache miss per item).
    func forEachSurvivingItem(
        _ body: (
            _ section: Int, _ index: Int, _ source: Int32, _ flags: UInt8, _ items: UnsafeBufferPointer<WindowItem>
        ) -> Void
    ) {
        newSources.withUnsafeBufferPointer { sources in
            newFlags.withUnsafeBufferPointer { flags in
                for newIndex in newToOld.indices where newToOld[newIndex] >= 0 {
                    let base = newBase[newIndex]
                    new.sections[newIndex].items.withUnsafeBufferPointer { items in
                        for index in items.indices {
                            let source = sources[base + index]
                            let itemFlags = flags[base + index]
                            // Most items stay untouched: skip them without calling out.
                            if source >= 0 && itemFlags == Self.stays { continue }
                            body(newIndex, index, source, itemFlags, items)
                        }
                    }
                }
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

}

/// What both change encoders (``WindowChanges`` and ``SparseChanges``) write the same way.
protocol ChangeEncoding {}

extension ChangeEncoding {
    /// Appends `,` before every element but the first.
    @inline(__always)
    func separator(_ first: inout Bool, _ out: inout [UInt8]) {
        if first { first = false } else { out.append(UInt8(ascii: ",")) }
    }

    /// Appends `[section,item]`.
    func writePath(_ section: Int, _ item: Int, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        JSONWriter.writeInteger(section, into: &out)
        out.append(UInt8(ascii: ","))
        JSONWriter.writeInteger(item, into: &out)
        out.append(UInt8(ascii: "]"))
    }
}

extension WindowChanges: ChangeEncoding {}
