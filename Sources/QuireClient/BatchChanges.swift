/// The `batch` change format, decoded: the arrays of openapi.yaml, indexes as the server sent them.
///
/// Deletes and move sources are indexes **before** the batch; inserts, move targets and updates are indexes
/// **after** it. ``ClientWindow/apply(_:)-(BatchChanges)`` checks the format's rules before it changes anything,
/// and ``BatchUpdater`` turns a batch into one `performBatchUpdates` followed by `reconfigureItems`.
public struct BatchChanges: Sendable, Hashable {
    /// A section inserted whole, with its items (they are not listed one by one in ``insertItems``).
    public struct SectionInsert: Sendable, Hashable {
        /// The section's index after the batch.
        public var index: Int
        /// The new section, its header, footer and items.
        public var section: ClientSection

        /// A section insert at `index` (after the batch).
        public init(index: Int, section: ClientSection) {
            self.index = index
            self.section = section
        }
    }

    /// A section moved whole; it has no item inserts, deletes or moves in the same batch.
    public struct SectionMove: Sendable, Hashable {
        /// The section's index before the batch.
        public var from: Int
        /// The section's index after the batch.
        public var to: Int

        /// A section move from `from` (before the batch) to `to` (after it).
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// An item at an index path: an insert (the path after the batch) or an update (likewise, applied after
    /// the structural changes).
    public struct ItemAt: Sendable, Hashable {
        /// `[section, item]`.
        public var at: [Int]
        /// The item's whole JSON: `id`, `type`, `data`, and `parent`, `depth`, `childCount` when present.
        public var item: ClientJSON

        /// An item at the index path `at` (`[section, item]`).
        public init(at: [Int], item: ClientJSON) {
            self.at = at
            self.item = item
        }
    }

    /// An item moved: from its index path before the batch to its index path after it.
    public struct ItemMove: Sendable, Hashable {
        /// `[section, item]` before the batch.
        public var from: [Int]
        /// `[section, item]` after the batch.
        public var to: [Int]

        /// An item move between two index paths (`[section, item]`).
        public init(from: [Int], to: [Int]) {
            self.from = from
            self.to = to
        }
    }

    /// A section whose header or footer changed (nothing else), at its index after the batch.
    public struct SectionUpdate: Sendable, Hashable {
        /// The section's index after the batch.
        public var index: Int
        /// The new header, `null` when there is none.
        public var header: ClientJSON
        /// The new footer, `null` when there is none.
        public var footer: ClientJSON

        /// A header and footer update of the section at `index` (after the batch).
        public init(index: Int, header: ClientJSON, footer: ClientJSON) {
            self.index = index
            self.header = header
            self.footer = footer
        }
    }

    /// Sections deleted, by their index before the batch.
    public var deleteSections: [Int]
    /// Sections inserted, at their index after the batch.
    public var insertSections: [SectionInsert]
    /// Sections moved whole.
    public var moveSections: [SectionMove]
    /// Items deleted, by their index path (`[section, item]`) before the batch.
    public var deleteItems: [[Int]]
    /// Items inserted, at their index path after the batch.
    public var insertItems: [ItemAt]
    /// Items moved (minimal: only the items that must move).
    public var moveItems: [ItemMove]
    /// The item count of every section after the batch, for the data source to answer as the batch runs.
    public var counts: [Int]
    /// Items changed in place, at their index path after the batch (`reconfigureItems`). An item that moves and
    /// changes is in ``moveItems`` and here.
    public var updateItems: [ItemAt]
    /// Sections whose header or footer changed, at their index after the batch.
    public var updateSections: [SectionUpdate]

    /// A batch from its arrays; every array but `counts` defaults to empty.
    ///
    /// - Parameters:
    ///   - deleteSections: sections deleted, by their index before the batch.
    ///   - insertSections: sections inserted, at their index after the batch.
    ///   - moveSections: sections moved whole.
    ///   - deleteItems: items deleted, by their index path before the batch.
    ///   - insertItems: items inserted, at their index path after the batch.
    ///   - moveItems: items moved.
    ///   - counts: the item count of every section after the batch (one entry per section).
    ///   - updateItems: items changed in place, at their index path after the batch.
    ///   - updateSections: headers and footers changed, at their section's index after the batch.
    public init(
        deleteSections: [Int] = [], insertSections: [SectionInsert] = [], moveSections: [SectionMove] = [],
        deleteItems: [[Int]] = [], insertItems: [ItemAt] = [], moveItems: [ItemMove] = [], counts: [Int],
        updateItems: [ItemAt] = [], updateSections: [SectionUpdate] = []
    ) {
        self.deleteSections = deleteSections
        self.insertSections = insertSections
        self.moveSections = moveSections
        self.deleteItems = deleteItems
        self.insertItems = insertItems
        self.moveItems = moveItems
        self.counts = counts
        self.updateItems = updateItems
        self.updateSections = updateSections
    }
}

/// One op of the `sequential` change format, decoded. Each op's indexes refer to the state the previous op
/// left (openapi.yaml); ``ClientWindow/apply(_:)-([SequentialOp])`` applies a list of them.
public enum SequentialOp: Sendable, Hashable {
    /// Deletes the section `id` at `index`.
    case deleteSection(index: Int, id: String)
    /// Inserts `section`, with its items, at `index`.
    case insertSection(index: Int, section: ClientSection)
    /// Moves the section `id` from `from` to `to` (`to` counted once it is removed).
    case moveSection(from: Int, to: Int, id: String)
    /// Deletes the item `id` at the index path `at` (`[section, item]`).
    case deleteItem(at: [Int], id: String)
    /// Inserts `item` at the index path `at`.
    case insertItem(at: [Int], item: ClientJSON)
    /// Moves the item `id` from the index path `from` to `to` (`to` counted once it is removed).
    case moveItem(from: [Int], to: [Int], id: String)
    /// Replaces the item at `at` with `item` (the same `id`, new content).
    case updateItem(at: [Int], item: ClientJSON)
    /// Replaces the header and footer of the section `id` at `index`.
    case updateSection(index: Int, id: String, header: ClientJSON, footer: ClientJSON)
}
