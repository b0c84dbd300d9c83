/// Where items live: a section's top level, or an item's children.
enum ItemContainer: Hashable {
    case section(Int32)
    case item(Int32)
}

extension ListVersion {
    /// The section stored under `key`.
    ///
    /// - Complexity: O(log *s*).
    func section(key: Int32) -> SectionNode? {
        guard let label = sectionIndex.value(for: key) else { return nil }
        return sections.value(for: label)
    }

    /// The item stored under `key`, at any depth.
    ///
    /// - Complexity: O(*d* log *n*) for an item at depth *d*.
    func item(key: Int32) -> ItemNode? {
        guard let location = itemIndex.value(for: key) else { return nil }
        return children(of: location.isChild ? .item(location.container) : .section(location.container))?
            .value(for: location.label)
    }

    /// The items directly inside `container`.
    func children(of container: ItemContainer) -> PersistentTree<OrderLabel, ItemNode>? {
        switch container {
        case .section(let key): section(key: key)?.items
        case .item(let key): item(key: key)?.children
        }
    }

    /// The ancestors of an item, nearest first, and the key of the section it is in.
    ///
    /// - Complexity: O(*d* log *n*).
    func ancestry(of key: Int32) -> (ancestors: [(key: Int32, label: OrderLabel)], section: Int32)? {
        var chain: [(key: Int32, label: OrderLabel)] = []
        var current = key
        while let location = itemIndex.value(for: current) {
            chain.append((current, location.label))
            if !location.isChild { return (Array(chain.dropFirst()), location.container) }
            current = location.container
        }
        return nil
    }

    /// Depth of an item: 0 at the top level of its section.
    func depth(of key: Int32) -> Int? {
        ancestry(of: key)?.ancestors.count
    }
}
