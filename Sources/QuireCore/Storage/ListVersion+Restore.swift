/// Why stored rows do not make a list (a damaged or hand-edited database).
public struct StoredListError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

extension ListVersion {
    /// Rebuilds a stored list from its rows, without parsing any JSON: each item's encoded bytes are
    /// used as they were stored, so the list is exactly the one that was committed (order, ids, types,
    /// data bytes, children, headers and footers, version).
    ///
    /// - Parameters:
    ///   - version: the stored version number.
    ///   - limits: the limits for every later write.
    ///   - sections: the sections, in order.
    ///   - items: the items of each container, each in order.
    /// - Throws: ``StoredListError`` when the rows do not form a list (an item twice, a cycle, an item
    ///   whose container does not exist, a body that is not an item of that id).
    /// - Complexity: O(*n* log *n*) for *n* items.
    public static func restoring(
        version: UInt64, limits: ListLimits, sections: [StorageChanges.Section],
        items: [StorageChanges.Container: [StorageChanges.Item]]
    ) throws(StoredListError) -> ListVersion {
        var builder = RestoreBuilder(items: items, maxDepth: limits.maxDepth)
        let sectionKeys = builder.interner.intern(sections.map(\.id))
        guard Set(sectionKeys).count == sectionKeys.count else { throw StoredListError("a section id is stored twice") }
        var sectionNodes: [SectionNode] = []
        sectionNodes.reserveCapacity(sections.count)
        for (section, key) in zip(sections, sectionKeys) {
            let tree = try builder.build(.section(section.id), containerKey: key, isChild: false, depth: 0)
            sectionNodes.append(
                SectionNode(key: key, id: section.id, header: section.header, footer: section.footer, items: tree))
        }
        let itemCount = items.values.reduce(0) { $0 + $1.count }
        guard builder.locations.count == itemCount else {
            throw StoredListError("\(itemCount - builder.locations.count) stored items belong to no section or item")
        }
        var locations = builder.locations
        locations.sort { $0.0 < $1.0 }
        for index in locations.indices.dropFirst() where locations[index - 1].0 == locations[index].0 {
            throw StoredListError("an item id is stored twice")
        }
        let labels = OrderLabel.initial(count: sections.count)
        let sectionOrder = sectionKeys.indices.sorted { sectionKeys[$0] < sectionKeys[$1] }
        return ListVersion(
            version: version, limits: limits, interner: builder.interner,
            sections: PersistentTree(sortedElements: labels, sectionNodes),
            sectionIndex: PersistentTree(
                sortedElements: sectionOrder.map { sectionKeys[$0] }, sectionOrder.map { labels[$0] }),
            itemIndex: PersistentTree(sortedElements: locations.map(\.0), locations.map(\.1)))
    }
}

private struct RestoreBuilder {
    let items: [StorageChanges.Container: [StorageChanges.Item]]
    let maxDepth: Int
    let interner = IdInterner()
    var locations: [(Int32, ItemLocation)] = []
    var quoted: [UInt8] = []

    init(items: [StorageChanges.Container: [StorageChanges.Item]], maxDepth: Int) {
        self.items = items
        self.maxDepth = maxDepth
        locations.reserveCapacity(items.values.reduce(0) { $0 + $1.count })
    }

    mutating func build(_ container: StorageChanges.Container, containerKey: Int32, isChild: Bool, depth: Int)
        throws(StoredListError) -> PersistentTree<OrderLabel, ItemNode>
    {
        guard let rows = items[container], !rows.isEmpty else { return PersistentTree() }
        guard depth <= maxDepth + 1 else { throw StoredListError("items nested deeper than the limit, or a cycle") }
        let labels = OrderLabel.initial(count: rows.count)
        var nodes: [ItemNode] = []
        nodes.reserveCapacity(rows.count)
        for (row, label) in zip(rows, labels) {
            let key = interner.intern(row.id)
            locations.append((key, ItemLocation(container: containerKey, isChild: isChild, label: label)))
            quoted.removeAll(keepingCapacity: true)
            JSONWriter.writeString(row.id, into: &quoted)
            let idEnd = 6 + quoted.count
            guard row.body.count > idEnd, row.body.starts(with: Self.prefix),
                row.body[6..<idEnd].elementsEqual(quoted)
            else { throw StoredListError("the stored body of item \"\(row.id)\" is not that item") }
            let children = try build(.item(row.id), containerKey: key, isChild: true, depth: depth + 1)
            nodes.append(
                ItemNode(
                    key: key, id: row.id, encoded: row.body, idEnd: idEnd, hash: ContentHash.of(row.body),
                    children: children))
        }
        return PersistentTree(sortedElements: labels, nodes)
    }

    private static let prefix = Array("{\"id\":".utf8)
}
