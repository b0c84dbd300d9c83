import Foundation

/// An item of the window with its `data` decoded into the app's own type.
///
/// Made by ``ClientWindow/item(at:as:)`` and ``ClientWindow/items(as:)``.
public struct TypedItem<Data: Decodable & Sendable>: Sendable {
    /// The item's id, unique in the list.
    public let id: String
    /// The cell kind (openapi.yaml): which cell class shows it.
    public let type: String
    /// The item's `data`, decoded.
    public let data: Data
    /// For children shown under an expanded item: the expanded item's id; `nil` for a top-level item.
    public let parent: String?
    /// For children shown under an expanded item: their depth (1 for its children); 0 for a top-level item.
    public let depth: Int
}

/// Where an item is in the window: section and item index (an `IndexPath` on UIKit, where `indexPath`
/// converts it).
public struct ItemPath: Sendable, Hashable, Comparable {
    /// The section's index.
    public var section: Int
    /// The item's index in its section.
    public var item: Int

    /// The path of the item at `item` in the section at `section`.
    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    init(_ path: [Int]) {
        self.init(section: path.count > 0 ? path[0] : 0, item: path.count > 1 ? path[1] : 0)
    }

    /// Orders paths as the items are shown: by section, then by item.
    public static func < (lhs: ItemPath, rhs: ItemPath) -> Bool {
        (lhs.section, lhs.item) < (rhs.section, rhs.item)
    }
}

extension ClientWindow {
    /// The item at `path`, its `data` decoded as `Data`.
    ///
    /// - Throws: `DecodingError` when the data does not decode, ``ChangeError`` when there is no such item.
    /// - Complexity: O(size of the item's data).
    public func item<Data: Decodable & Sendable>(at path: ItemPath, as type: Data.Type = Data.self) throws
        -> TypedItem<Data>
    {
        guard sections.indices.contains(path.section), sections[path.section].items.indices.contains(path.item) else {
            throw ChangeError("no item at [\(path.section), \(path.item)]")
        }
        return try Self.typed(sections[path.section].items[path.item], as: type)
    }

    /// Every item of every section, decoded; items whose data does not decode as `Data` are left out.
    ///
    /// - Complexity: O(size of the window's items' data).
    public func items<Data: Decodable & Sendable>(as type: Data.Type = Data.self) -> [[TypedItem<Data>]] {
        sections.map { section in section.items.compactMap { try? Self.typed($0, as: type) } }
    }

    static func typed<Data: Decodable & Sendable>(_ json: ClientJSON, as type: Data.Type) throws -> TypedItem<Data> {
        let encoded = try JSONEncoder().encode(json["data"] ?? .null)
        return TypedItem(
            id: json["id"]?.stringValue ?? "", type: json["type"]?.stringValue ?? "",
            data: try JSONDecoder().decode(Data.self, from: encoded), parent: json["parent"]?.stringValue,
            depth: json.integer("depth") ?? 0)
    }
}
