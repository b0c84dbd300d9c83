/// One section as the client shows it: a section of a ``ClientWindow``.
public struct ClientSection: Hashable, Sendable {
    /// The section's id.
    public var id: String
    /// The header, `null` when none.
    public var header: ClientJSON
    /// The footer, `null` when none.
    public var footer: ClientJSON
    /// The items, each an object with at least `id`.
    public var items: [ClientJSON]

    /// A section; without a header or footer by default.
    public init(id: String, header: ClientJSON = .null, footer: ClientJSON = .null, items: [ClientJSON]) {
        self.id = id
        self.header = header
        self.footer = footer
        self.items = items
    }

}

/// The run of a list a client holds: the sections it shows with the items it has loaded. It applies both
/// change formats of the Quire API, checking them first; a failed check throws and leaves it unchanged.
///
/// A ``QuireSession`` keeps one up to date and publishes it with every ``SessionUpdate``: a data source
/// answers its counts and cells from ``sections``. A window is a value: the one an update carries does not
/// change afterwards.
public struct ClientWindow: Hashable, Sendable {
    /// The sections, in order.
    public var sections: [ClientSection]

    /// A window of these sections; empty by default.
    public init(sections: [ClientSection] = []) {
        self.sections = sections
    }

    /// The items' ids in order, across sections.
    ///
    /// - Complexity: O(items in the window).
    public var itemIDs: [String] { sections.flatMap { $0.items.compactMap { $0["id"]?.stringValue } } }
}
