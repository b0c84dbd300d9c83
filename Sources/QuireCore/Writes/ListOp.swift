/// One write op of `POST /v1/lists/{list}/ops` (openapi.yaml), decoded and validated.
public enum ListOp: Sendable {
    /// Where an insert or a move lands among its siblings.
    public enum Anchor: Sendable, Hashable {
        /// At the end (no `after` nor `before`).
        case end
        /// Right after the sibling with this id.
        case after(String)
        /// Right before the sibling with this id.
        case before(String)
    }

    /// Which items an insert or a move goes among.
    public enum Target: Sendable, Hashable {
        /// The top level of a section (`"section": id`).
        case section(String)
        /// The children of an item (`"parent": id`).
        case parent(String)
    }

    /// A header or footer in `updateSection`: left as it is (member absent) or set (`null` removes it).
    public enum SupplementaryChange: Sendable {
        case keep
        case set([UInt8]?)
    }

    /// Inserts items (with their children) at the anchor; without a target, among the anchor's siblings.
    case insertItems(items: [ItemDraft], target: Target?, anchor: Anchor)
    /// Removes items and their children.
    case removeItems(ids: [String])
    /// Replaces items' type and data (and their children when the item carries `children`).
    case updateItems(items: [ItemDraft])
    /// Moves an item (with its children); without a target, among the anchor's siblings, or within its own
    /// container when there is no anchor either.
    case moveItem(id: String, target: Target?, anchor: Anchor)
    /// Inserts sections at the anchor.
    case insertSections(sections: [SectionDraft], anchor: Anchor)
    /// Removes sections and their items.
    case removeSections(ids: [String])
    /// Changes a section's header and footer.
    case updateSection(id: String, header: SupplementaryChange, footer: SupplementaryChange)
    /// Moves a section to the anchor.
    case moveSection(id: String, anchor: Anchor)
}
