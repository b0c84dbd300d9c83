/// The `batch` change format, decoded: the arrays of API.md §5, indexes as the server sent them.
public struct BatchChanges: Sendable, Hashable {
    public struct SectionInsert: Sendable, Hashable {
        public var index: Int
        public var section: ClientSection

        public init(index: Int, section: ClientSection) {
            self.index = index
            self.section = section
        }
    }

    public struct SectionMove: Sendable, Hashable {
        public var from: Int
        public var to: Int

        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    public struct ItemAt: Sendable, Hashable {
        public var at: [Int]
        public var item: ClientJSON

        public init(at: [Int], item: ClientJSON) {
            self.at = at
            self.item = item
        }
    }

    public struct ItemMove: Sendable, Hashable {
        public var from: [Int]
        public var to: [Int]

        public init(from: [Int], to: [Int]) {
            self.from = from
            self.to = to
        }
    }

    public struct SectionUpdate: Sendable, Hashable {
        public var index: Int
        public var header: ClientJSON
        public var footer: ClientJSON

        public init(index: Int, header: ClientJSON, footer: ClientJSON) {
            self.index = index
            self.header = header
            self.footer = footer
        }
    }

    public var deleteSections: [Int]
    public var insertSections: [SectionInsert]
    public var moveSections: [SectionMove]
    public var deleteItems: [[Int]]
    public var insertItems: [ItemAt]
    public var moveItems: [ItemMove]
    public var counts: [Int]
    public var updateItems: [ItemAt]
    public var updateSections: [SectionUpdate]

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

/// One op of the `sequential` change format, decoded.
public enum SequentialOp: Sendable, Hashable {
    case deleteSection(index: Int, id: String)
    case insertSection(index: Int, section: ClientSection)
    case moveSection(from: Int, to: Int, id: String)
    case deleteItem(at: [Int], id: String)
    case insertItem(at: [Int], item: ClientJSON)
    case moveItem(from: [Int], to: [Int], id: String)
    case updateItem(at: [Int], item: ClientJSON)
    case updateSection(index: Int, id: String, header: ClientJSON, footer: ClientJSON)
}
