/// An item decoded and validated, encoded once, not yet interned or placed: what a write carries.
public struct ItemDraft: Sendable {
    /// The item's id.
    public let id: String
    /// `{"id":…,"type":…,"data":…}`, canonical.
    let encoded: [UInt8]
    /// `encoded[6 ..< idEnd]` is the quoted id.
    let idEnd: Int
    let hash: UInt64
    /// The children, or `nil` when the document had no `children` member.
    let children: [ItemDraft]?

    init(id: String, type: String, data: [UInt8], children: [ItemDraft]?) {
        // Sized once for what follows (escapes aside): grown piece by piece, it would be allocated several times,
        // and the item would keep up to twice its bytes for as long as it lives.
        var encoded: [UInt8] = []
        encoded.reserveCapacity(27 + id.utf8.count + type.utf8.count + data.count)
        encoded.append(contentsOf: "{\"id\":".utf8)
        JSONWriter.writeString(id, into: &encoded)
        let idEnd = encoded.count
        encoded.append(contentsOf: ",\"type\":".utf8)
        JSONWriter.writeString(type, into: &encoded)
        encoded.append(contentsOf: ",\"data\":".utf8)
        encoded.append(contentsOf: data)
        encoded.append(UInt8(ascii: "}"))
        self.id = id
        self.encoded = encoded
        self.idEnd = idEnd
        self.hash = ContentHash.of(encoded)
        self.children = children
    }

    /// Items in this draft, itself and its descendants.
    var totalCount: Int { 1 + (children?.reduce(0) { $0 + $1.totalCount } ?? 0) }

    /// Levels of children below this draft.
    var height: Int { children?.map { $0.height + 1 }.max() ?? 0 }
}

/// A section decoded and validated: id, encoded header and footer, item drafts.
public struct SectionDraft: Sendable {
    /// The section's id.
    public let id: String
    let header: [UInt8]?
    let footer: [UInt8]?
    let items: [ItemDraft]
}

/// A header or footer change in an `updateSection` op.
enum SupplementaryChange: Sendable {
    case keep
    case set([UInt8]?)
}
