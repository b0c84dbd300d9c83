/// What one write changed, in the terms a row store needs: rows to delete, rows to insert at a new
/// position, rows whose content changed in place. Items and sections that kept their place and content
/// appear nowhere, so a store writes in proportion to the change, not to the list.
///
/// Positions are the store's own: the core names, for every run of consecutive items (or sections) that
/// need a new position, the nearest siblings that kept theirs, and the store picks keys between the keys
/// it stored for those (``StoragePosition/between(_:_:count:)``).
public struct StorageChanges: Sendable {
    /// Where an item lives: directly in a section, or among an item's children (by id).
    public enum Container: Hashable, Sendable {
        case section(String)
        case item(String)
    }

    /// One item's row content: its id and its encoded JSON (`{"id":…,"type":…,"data":…}`), children aside.
    public struct Item: Sendable, Equatable {
        public let id: String
        public let body: [UInt8]

        public init(id: String, body: [UInt8]) {
            self.id = id
            self.body = body
        }
    }

    /// One section's row content.
    public struct Section: Sendable, Equatable {
        public let id: String
        /// `{"type":…,"data":…}`, or `nil`.
        public let header: [UInt8]?
        public let footer: [UInt8]?

        public init(id: String, header: [UInt8]?, footer: [UInt8]?) {
            self.id = id
            self.header = header
            self.footer = footer
        }
    }

    /// Consecutive items of one container that need new positions (new items, or items that moved),
    /// between two siblings that kept theirs (`nil`: the container's start or end).
    public struct ItemRun: Sendable {
        public let container: Container
        /// The kept sibling just before the run, or `nil` at the start.
        public let after: String?
        /// The kept sibling just after the run, or `nil` at the end.
        public internal(set) var before: String?
        /// The items, in order.
        public internal(set) var items: [Item]
    }

    /// Consecutive sections that need new positions, between two sections that kept theirs.
    public struct SectionRun: Sendable {
        public let after: String?
        public internal(set) var before: String?
        public internal(set) var sections: [Section]
    }

    /// Sections gone from the list (their items are listed in ``removedItems`` or placed elsewhere).
    public internal(set) var removedSections: [String] = []
    /// Sections that are new or moved: (re)write their rows at new positions.
    public internal(set) var placedSections: [SectionRun] = []
    /// Sections that kept their place but whose header or footer changed.
    public internal(set) var updatedSections: [Section] = []
    /// Items gone from the list.
    public internal(set) var removedItems: [String] = []
    /// Ids of items that existed and moved: their old rows go before the placed rows are written.
    public internal(set) var movedItems: [String] = []
    /// Items that are new or moved, by runs.
    public internal(set) var placedItems: [ItemRun] = []
    /// Items that kept their place but whose content changed.
    public internal(set) var updatedItems: [Item] = []

    public init() {}

    /// Whether nothing but the version number changed.
    public var isEmpty: Bool {
        removedSections.isEmpty && placedSections.isEmpty && updatedSections.isEmpty && removedItems.isEmpty
            && placedItems.isEmpty && updatedItems.isEmpty
    }

    /// Rows written (deleted, inserted or updated), for logs and tests.
    public var rowCount: Int {
        removedSections.count + placedSections.reduce(0) { $0 + $1.sections.count } + updatedSections.count
            + removedItems.count + movedItems.count + placedItems.reduce(0) { $0 + $1.items.count }
            + updatedItems.count
    }
}
