/// One section of a list version: id, encoded header and footer, and its top-level items.
final class SectionNode: Sendable, TreeValue {
    let key: Int32
    let id: String
    /// The id as a JSON string, with its quotes.
    let quotedID: [UInt8]
    /// `{"type":…,"data":…}` of the header, or `nil`.
    let header: [UInt8]?
    /// `{"type":…,"data":…}` of the footer, or `nil`.
    let footer: [UInt8]?
    /// Hash of header and footer: a change means a section update.
    let supplementaryHash: UInt64
    /// The top-level items.
    let items: PersistentTree<OrderLabel, ItemNode>

    init(key: Int32, id: String, header: [UInt8]?, footer: [UInt8]?, items: PersistentTree<OrderLabel, ItemNode>) {
        self.key = key
        self.id = id
        var quoted: [UInt8] = []
        JSONWriter.writeString(id, into: &quoted)
        self.quotedID = quoted
        self.header = header
        self.footer = footer
        self.supplementaryHash = ContentHash.combine(
            header.map(ContentHash.of) ?? 1, footer.map(ContentHash.of) ?? 2)
        self.items = items
    }

    func replacingItems(_ items: PersistentTree<OrderLabel, ItemNode>) -> SectionNode {
        SectionNode(key: key, id: id, header: header, footer: footer, items: items)
    }

    func replacingSupplementaries(header: [UInt8]?, footer: [UInt8]?) -> SectionNode {
        SectionNode(key: key, id: id, header: header, footer: footer, items: items)
    }

    /// A section weighs its number of top-level items, so the sections tree sums them.
    var treeWeight: Int { items.count }
}
