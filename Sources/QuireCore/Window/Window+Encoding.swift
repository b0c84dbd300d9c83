extension WindowItem {
    /// Appends the item's JSON: its stored bytes, plus `childCount` when it has children and `parent`
    /// and `depth` when it is a child.
    ///
    /// - Complexity: O(*b*) in the item's encoded size (a copy; nothing is re-encoded).
    public func write(into out: inout [UInt8]) {
        withUnsafePointer(to: self) { Self.write(at: $0, into: &out) }
    }

    /// Appends the JSON of the item at `item`, reading in place: copying a window item would retain its
    /// node and parent, which costs a cache miss per item on large windows.
    static func write(at item: UnsafePointer<WindowItem>, into out: inout [UInt8]) {
        let childCount = item.pointee.childCount
        let isChild = item.pointee.depth > 0
        item.pointee.encoded.withUnsafeBufferPointer { bytes in
            out.append(contentsOf: childCount > 0 || isChild ? UnsafeBufferPointer(rebasing: bytes.dropLast()) : bytes)
        }
        guard childCount > 0 || isChild else { return }
        if childCount > 0 {
            out.appendLiteral(",\"childCount\":")
            JSONWriter.writeInteger(childCount, into: &out)
        }
        if isChild, let parent = item.pointee.parent {
            out.appendLiteral(",\"parent\":")
            out.append(contentsOf: parent.quotedID)
            out.appendLiteral(",\"depth\":")
            JSONWriter.writeInteger(item.pointee.depth, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Appends the id of the item at `item` as a JSON string, reading in place.
    static func writeQuotedID(at item: UnsafePointer<WindowItem>, into out: inout [UInt8]) {
        let end = Int(item.pointee.idEnd)
        item.pointee.encoded.withUnsafeBufferPointer { bytes in
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[6..<end]))
        }
    }
}

extension WindowSection {
    /// Appends the section as in a page (openapi.yaml): `id`, `header`, `footer`, `offset`, `count`, `items`.
    ///
    /// - Complexity: O(*b*) in the bytes of its items.
    public func write(into out: inout [UInt8]) {
        out.appendLiteral("{\"id\":")
        out.append(contentsOf: node.quotedID)
        writeSupplementaries(into: &out)
        out.appendLiteral(",\"offset\":")
        JSONWriter.writeInteger(offset, into: &out)
        out.appendLiteral(",\"count\":")
        JSONWriter.writeInteger(count, into: &out)
        out.appendLiteral(",\"items\":[")
        items.withUnsafeBufferPointer { items in
            for index in items.indices {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                WindowItem.write(at: items.baseAddress! + index, into: &out)
            }
        }
        out.appendLiteral("]}")
    }

    /// Appends `,"header":…,"footer":…`.
    func writeSupplementaries(into out: inout [UInt8]) {
        node.writeSupplementaries(into: &out)
    }
}

extension SectionNode {
    /// Appends `,"header":…,"footer":…`.
    func writeSupplementaries(into out: inout [UInt8]) {
        out.appendLiteral(",\"header\":")
        if let header { out.append(contentsOf: header) } else { out.appendLiteral("null") }
        out.appendLiteral(",\"footer\":")
        if let footer { out.append(contentsOf: footer) } else { out.appendLiteral("null") }
    }
}

extension Window {
    /// Appends the page's `sections` array (openapi.yaml), each with its slice of items.
    ///
    /// - Complexity: O(*b*) in the bytes of the window's items.
    public func encodeSections(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, section) in sections.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            section.write(into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Appends `{"hasPrev":…,"hasNext":…,"total":…}`.
    ///
    /// - Complexity: O(1).
    public func encodePageInfo(into out: inout [UInt8]) {
        out.appendLiteral("{\"hasPrev\":")
        out.append(contentsOf: (hasPrev ? "true" : "false").utf8)
        out.appendLiteral(",\"hasNext\":")
        out.append(contentsOf: (hasNext ? "true" : "false").utf8)
        out.appendLiteral(",\"total\":")
        JSONWriter.writeInteger(total, into: &out)
        out.append(UInt8(ascii: "}"))
    }
}
