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

    /// The items' ids in order, across sections.
    public var itemIDs: [String] { sections.flatMap { $0.items.compactMap { $0["id"]?.stringValue } } }
}
