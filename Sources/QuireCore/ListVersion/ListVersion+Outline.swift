/// A list's outline by position, for a producer that places items itself (a source's follower, which finds where
/// a row goes by binary search among the items it placed before): sections and top-level items by index, and where
/// an item is.
extension ListVersion {
    /// The id of the section at `index` among the list's sections.
    ///
    /// - Precondition: `index` is below ``sectionCount``.
    /// - Complexity: O(log *s*).
    public func sectionID(at index: Int) -> String {
        sections.element(at: index).value.id
    }

    /// The number of top-level items of the section `id`, or `nil` when there is no such section.
    ///
    /// - Complexity: O(log *s*).
    public func topLevelItemCount(inSection id: String) -> Int? {
        topLevelItems(inSection: id)?.count
    }

    /// The id of the top-level item at `index` of the section `id`, or `nil` when there is no such section or item.
    ///
    /// - Complexity: O(log *s* + log *n*).
    public func topLevelItemID(at index: Int, inSection id: String) -> String? {
        guard let items = topLevelItems(inSection: id), index >= 0, index < items.count else { return nil }
        return items.id(at: index)
    }

    /// The top-level items of the section `id`, by index, or `nil` when there is no such section: what a binary
    /// search among them reads, the section found once rather than at every probe.
    ///
    /// - Complexity: O(log *s*).
    public func topLevelItems(inSection id: String) -> TopLevelItems? {
        guard let key = interner.lookup(id), let section = section(key: key) else { return nil }
        return TopLevelItems(section: section)
    }

    /// The index of the top-level item `id` among the items of its section, with that section's id, or `nil` when
    /// no top-level item has that id: found by the item's position label, comparing no keys of the producer's.
    ///
    /// - Complexity: O(log *n*).
    public func topLevelItemIndex(of id: String) -> (section: String, index: Int)? {
        guard let place = topLevelPlace(of: id), let index = place.section.items.rank(of: place.label) else {
            return nil
        }
        return (place.section.id, index)
    }

    /// The section of the top-level item `id` and the item's label in it.
    private func topLevelPlace(of id: String) -> (section: SectionNode, label: OrderLabel)? {
        guard let key = interner.lookup(id), let location = itemIndex.value(for: key), !location.isChild,
            let section = section(key: location.container)
        else { return nil }
        return (section, location.label)
    }

    /// The top-level items of one section of a version (``topLevelItems(inSection:)``).
    public struct TopLevelItems: Sendable {
        fileprivate let section: SectionNode

        public var count: Int { section.items.count }

        /// The id of the item at `index`.
        ///
        /// - Precondition: `index` is below ``count``.
        /// - Complexity: O(log *n*).
        public func id(at index: Int) -> String {
            section.items.element(at: index).value.id
        }
    }

    /// The id of the section a top-level item `id` is in, or `nil` when no top-level item has that id.
    ///
    /// - Complexity: O(log *n*).
    public func sectionOfTopLevelItem(_ id: String) -> String? {
        topLevelPlace(of: id)?.section.id
    }

    /// An item's document (`{"id","type","data"}`, without its children), or `nil` when no item has that id.
    ///
    /// - Complexity: O(*d* log *n*) for an item at depth *d*, and the document's size to parse it.
    public func itemDocument(_ id: String) -> JSONValue? {
        guard let key = interner.lookup(id), let item = item(key: key) else { return nil }
        return try? JSONParser(keepsNumberText: true).parse(item.encoded)
    }
}
