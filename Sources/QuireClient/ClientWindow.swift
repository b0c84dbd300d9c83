public import Foundation

/// One section as the client shows it.
public struct ClientSection: Hashable, Sendable {
    /// The section's id.
    public var id: String
    /// The header, `null` when none.
    public var header: ClientJSON
    /// The footer, `null` when none.
    public var footer: ClientJSON
    /// The items, each an object with at least `id`.
    public var items: [ClientJSON]

    public init(id: String, header: ClientJSON = .null, footer: ClientJSON = .null, items: [ClientJSON]) {
        self.id = id
        self.header = header
        self.footer = footer
        self.items = items
    }

}

/// The run of a list a client holds: the sections it shows with the items it has loaded. It applies both
/// change formats of the Quire API, checking them first; a failed check throws and leaves it unchanged.
public struct ClientWindow: Hashable, Sendable {
    /// The sections, in order.
    public var sections: [ClientSection]

    public init(sections: [ClientSection] = []) {
        self.sections = sections
    }

    /// A window from a page's `sections` array (JSON).
    ///
    /// - Throws: ``ChangeError`` for malformed JSON or a missing member.
    public init(pageSections data: Data) throws {
        guard case .array(let elements) = try ClientJSONParser.parse(Array(data)) else {
            throw ChangeError("a page's sections must be an array")
        }
        sections = try elements.map(ClientSection.init(json:))
    }

    /// The items' ids in order, across sections.
    public var itemIDs: [String] { sections.flatMap { $0.items.compactMap { $0["id"]?.stringValue } } }

    /// Applies a `batch` change object (JSON).
    ///
    /// - Throws: ``ChangeError`` when it is malformed or breaks a batch rule; the window is unchanged.
    public mutating func apply(batch data: Data) throws {
        try apply(BatchChanges(json: ClientJSONParser.parse(Array(data))))
    }

    /// Applies a `sequential` change array (JSON).
    ///
    /// - Throws: ``ChangeError`` when it is malformed or an op does not fit; the window is unchanged.
    public mutating func apply(sequential data: Data) throws {
        guard case .array(let elements) = try ClientJSONParser.parse(Array(data)) else {
            throw ChangeError("sequential changes must be an array")
        }
        try apply(elements.map(SequentialOp.init(json:)))
    }
}
