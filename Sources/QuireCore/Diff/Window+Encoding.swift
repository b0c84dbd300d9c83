extension WindowItem {
    /// Appends the item's JSON: its stored bytes, plus `childCount` when it has children and `parent`
    /// and `depth` when it is a child.
    ///
    /// - Complexity: O(*b*) in the item's encoded size (a copy; nothing is re-encoded).
    public func write(into out: inout [UInt8]) {
        let encoded = node.encoded
        guard !node.children.isEmpty || parent != nil else {
            out.append(contentsOf: encoded)
            return
        }
        out.append(contentsOf: encoded[..<(encoded.count - 1)])
        if !node.children.isEmpty {
            out.append(contentsOf: ",\"childCount\":".utf8)
            JSONWriter.writeInteger(node.children.count, into: &out)
        }
        if let parent {
            out.append(contentsOf: ",\"parent\":".utf8)
            out.append(contentsOf: parent.quotedID)
            out.append(contentsOf: ",\"depth\":".utf8)
            JSONWriter.writeInteger(depth, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}

extension WindowSection {
    /// Appends the section as in a page (API.md §3): `id`, `header`, `footer`, `offset`, `count`, `items`.
    ///
    /// - Complexity: O(*b*) in the bytes of its items.
    public func write(into out: inout [UInt8]) {
        out.append(contentsOf: "{\"id\":".utf8)
        out.append(contentsOf: node.quotedID)
        writeSupplementaries(into: &out)
        out.append(contentsOf: ",\"offset\":".utf8)
        JSONWriter.writeInteger(offset, into: &out)
        out.append(contentsOf: ",\"count\":".utf8)
        JSONWriter.writeInteger(count, into: &out)
        out.append(contentsOf: ",\"items\":[".utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            item.write(into: &out)
        }
        out.append(contentsOf: "]}".utf8)
    }

    /// Appends `,"header":…,"footer":…`.
    func writeSupplementaries(into out: inout [UInt8]) {
        out.append(contentsOf: ",\"header\":".utf8)
        out.append(contentsOf: node.header ?? Array("null".utf8))
        out.append(contentsOf: ",\"footer\":".utf8)
        out.append(contentsOf: node.footer ?? Array("null".utf8))
    }
}

extension Window {
    /// Appends the page's `sections` array (API.md §3), each with its slice of items.
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
        out.append(contentsOf: "{\"hasPrev\":".utf8)
        out.append(contentsOf: (hasPrev ? "true" : "false").utf8)
        out.append(contentsOf: ",\"hasNext\":".utf8)
        out.append(contentsOf: (hasNext ? "true" : "false").utf8)
        out.append(contentsOf: ",\"total\":".utf8)
        JSONWriter.writeInteger(total, into: &out)
        out.append(UInt8(ascii: "}"))
    }
}
