extension ListVersion {
    /// Appends the whole list as a document, `{"sections":[...]}`, children nested under their items:
    /// what a `PUT` of this version would carry. Assembled from the stored bytes (for storage and export).
    ///
    /// - Complexity: O(*b*) in the bytes of the list.
    public func encodeDocument(into out: inout [UInt8]) {
        out.appendLiteral("{\"sections\":[")
        var first = true
        sections.forEach { _, section in
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.appendLiteral("{\"id\":")
            out.append(contentsOf: section.quotedID)
            out.appendLiteral(",\"header\":")
            out.append(contentsOf: section.header ?? Array("null".utf8))
            out.appendLiteral(",\"footer\":")
            out.append(contentsOf: section.footer ?? Array("null".utf8))
            out.appendLiteral(",\"items\":")
            Self.encodeItems(section.items, into: &out)
            out.append(UInt8(ascii: "}"))
            return true
        }
        out.appendLiteral("]}")
    }

    /// The document as bytes.
    ///
    /// - Complexity: O(*b*) in the bytes of the list.
    public var documentBytes: [UInt8] {
        var out: [UInt8] = []
        encodeDocument(into: &out)
        return out
    }

    private static func encodeItems(_ items: PersistentTree<OrderLabel, ItemNode>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        var first = true
        items.forEach { _, item in
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            if item.children.isEmpty {
                out.append(contentsOf: item.encoded)
            } else {
                out.append(contentsOf: item.encoded.dropLast())
                out.appendLiteral(",\"children\":")
                encodeItems(item.children, into: &out)
                out.append(UInt8(ascii: "}"))
            }
            return true
        }
        out.append(UInt8(ascii: "]"))
    }
}
