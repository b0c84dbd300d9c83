public import Foundation
import OpenAPIRuntime

/// The SDK's window model built from the types swift-openapi-generator makes from openapi.yaml: answers
/// are decoded by the generated `Codable` types (so a member the contract does not have, or a missing one,
/// fails to decode), then turned into the SDK's own values here.

// MARK: Decoding JSON text with the generated types

enum GeneratedJSON {
    /// Decodes `data` as the generated type `Value`.
    ///
    /// - Throws: ``ChangeError`` saying what did not decode (a `DecodingError`'s path and reason).
    static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        do {
            return try JSONDecoder().decode(Value.self, from: data)
        } catch let error as DecodingError {
            throw ChangeError("malformed \(Value.self): \(Self.describe(error))")
        } catch {
            throw ChangeError("malformed \(Value.self): \(error)")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c):
            context = c
        @unknown default: return "\(error)"
        }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return "\(path.isEmpty ? "" : "at \(path): ")\(context.debugDescription)"
    }
}

extension ClientWindow {
    /// A window from a page's `sections` array (JSON).
    ///
    /// - Throws: ``ChangeError`` when it is not an array of the document's `PageSection`.
    public init(pageSections data: Data) throws {
        let sections = try GeneratedJSON.decode([Components.Schemas.PageSection].self, from: data)
        self.init(sections: sections.map(ClientSection.init))
    }

    /// Applies a `batch` change object (JSON, the document's `BatchChanges`).
    ///
    /// - Throws: ``ChangeError`` when it is malformed or breaks a batch rule; the window is unchanged.
    public mutating func apply(batch data: Data) throws {
        try apply(BatchChanges(data: data))
    }

    /// Applies a `sequential` change array (JSON, the document's `SequentialChanges`).
    ///
    /// - Throws: ``ChangeError`` when it is malformed or an op does not fit; the window is unchanged.
    public mutating func apply(sequential data: Data) throws {
        let changes = try GeneratedJSON.decode(Components.Schemas.SequentialChanges.self, from: data)
        try apply(changes.map(SequentialOp.init))
    }
}

extension BatchChanges {
    /// A batch from its JSON (the document's `BatchChanges`).
    ///
    /// - Throws: ``ChangeError`` when it does not decode.
    public init(data: Data) throws {
        self.init(try GeneratedJSON.decode(Components.Schemas.BatchChanges.self, from: data))
    }

    init(_ batch: Components.Schemas.BatchChanges) {
        self.init(
            deleteSections: batch.deleteSections,
            insertSections: batch.insertSections.map {
                SectionInsert(index: $0.index, section: ClientSection($0.section))
            },
            moveSections: batch.moveSections.map { SectionMove(from: $0.from, to: $0.to) },
            deleteItems: batch.deleteItems,
            insertItems: batch.insertItems.map { ItemAt(at: $0.at, item: ClientJSON($0.item)) },
            moveItems: batch.moveItems.map { ItemMove(from: $0.from, to: $0.to) },
            counts: batch.counts,
            updateItems: batch.updateItems.map { ItemAt(at: $0.at, item: ClientJSON($0.item)) },
            updateSections: batch.updateSections.map {
                SectionUpdate(index: $0.index, header: ClientJSON($0.header), footer: ClientJSON($0.footer))
            })
    }
}

extension SequentialOp {
    init(_ change: Components.Schemas.SequentialChange) {
        switch change {
        case .deleteSection(let op): self = .deleteSection(index: op.index, id: op.id)
        case .insertSection(let op): self = .insertSection(index: op.index, section: ClientSection(op.section))
        case .moveSection(let op): self = .moveSection(from: op.from, to: op.to, id: op.id)
        case .deleteItem(let op): self = .deleteItem(at: op.at, id: op.id)
        case .insertItem(let op): self = .insertItem(at: op.at, item: ClientJSON(op.item))
        case .moveItem(let op): self = .moveItem(from: op.from, to: op.to, id: op.id)
        case .updateItem(let op): self = .updateItem(at: op.at, item: ClientJSON(op.item))
        case .updateSection(let op):
            self = .updateSection(
                index: op.index, id: op.id, header: ClientJSON(op.header), footer: ClientJSON(op.footer))
        }
    }
}

extension ClientSection {
    init(_ section: Components.Schemas.PageSection) {
        self.init(
            id: section.id, header: ClientJSON(section.header), footer: ClientJSON(section.footer),
            items: section.items.map(ClientJSON.init))
    }
}

// MARK: JSON values

extension ClientJSON {
    /// An item as the window holds it: the members the server sent (`id`, `type`, `data`, and `childCount`,
    /// `parent`, `depth` when present).
    init(_ item: Components.Schemas.PageItem) {
        var members: [String: ClientJSON] = [
            "id": .string(item.id), "type": .string(item._type), "data": ClientJSON(item.data),
        ]
        if let childCount = item.childCount { members["childCount"] = .number(Double(childCount)) }
        if let parent = item.parent { members["parent"] = .string(parent) }
        if let depth = item.depth { members["depth"] = .number(Double(depth)) }
        self = .object(members)
    }

    /// A header or footer, `null` when there is none.
    init(_ view: Components.Schemas.SupplementaryView?) {
        guard let view else {
            self = .null
            return
        }
        self = .object(["type": .string(view._type), "data": ClientJSON(view.data)])
    }

    /// Any JSON value the generated types carry untyped (an item's or a view's `data`).
    init(_ container: OpenAPIValueContainer) {
        self.init(any: container.value)
    }

    private init(any value: (any Sendable)?) {
        switch value {
        case nil: self = .null
        case let flag as Bool: self = .bool(flag)
        case let number as Int: self = .number(Double(number))
        case let number as Double: self = .number(number)
        case let string as String: self = .string(string)
        case let array as [(any Sendable)?]: self = .array(array.map { ClientJSON(any: $0) })
        case let object as [String: (any Sendable)?]: self = .object(object.mapValues { ClientJSON(any: $0) })
        default: self = .null
        }
    }

    /// Parses JSON text (with Foundation's `JSONDecoder`).
    ///
    /// - Throws: ``ChangeError`` when it is not JSON.
    public init(parsing bytes: some Collection<UInt8>) throws {
        self = try GeneratedJSON.decode(ClientJSON.self, from: Data(bytes))
    }

    /// The member as an integer.
    func integer(_ key: String) -> Int? {
        guard case .number(let number)? = self[key] else { return nil }
        return Int(exactly: number)
    }
}
