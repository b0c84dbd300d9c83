/// The `batch` change format, decoded.
public struct BatchChanges: Sendable, Hashable {
    public struct SectionInsert: Sendable, Hashable {
        public var index: Int
        public var section: ClientSection
    }

    public struct SectionMove: Sendable, Hashable {
        public var from: Int
        public var to: Int
    }

    public struct ItemAt: Sendable, Hashable {
        public var at: [Int]
        public var item: ClientJSON
    }

    public struct ItemMove: Sendable, Hashable {
        public var from: [Int]
        public var to: [Int]
    }

    public struct SectionUpdate: Sendable, Hashable {
        public var index: Int
        public var header: ClientJSON
        public var footer: ClientJSON
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
