extension ListVersion {
    /// Replaces the items directly inside `container`, copying the path up to the sections tree.
    ///
    /// - Complexity: O(*d*² log *n*) for a container at depth *d*.
    mutating func setChildren(_ tree: PersistentTree<OrderLabel, ItemNode>, of container: ItemContainer) {
        switch container {
        case .section(let key):
            let label = sectionIndex.value(for: key)!
            sections.insert(sections.value(for: label)!.replacingItems(tree), for: label)
        case .item(let key):
            touch(key)
            replaceNode(item(key: key)!.replacingChildren(tree))
        }
    }

    /// Stores `node` where the item with its key lives.
    mutating func replaceNode(_ node: ItemNode) {
        touch(node.key)
        let location = itemIndex.value(for: node.key)!
        let container = location.containerKind
        var tree = children(of: container)!
        tree.insert(node, for: location.label)
        setChildren(tree, of: container)
    }

    /// Removes an item and its descendants from the list and the index.
    mutating func removeItem(_ key: Int32) {
        let node = item(key: key)!
        let location = itemIndex.value(for: key)!
        unindex(node)
        var tree = children(of: location.containerKind)!
        tree.remove(location.label)
        setChildren(tree, of: location.containerKind)
    }

    /// Removes `node` and its descendants from the item index, recording them as changed unless their
    /// whole section goes (a removed section is diffed as a whole).
    mutating func unindex(_ node: ItemNode, recording: Bool = true) {
        itemIndex.remove(node.key)
        if recording { touch(node.key) }
        node.children.forEach { _, child in
            unindex(child, recording: recording)
            return true
        }
    }

    /// The container an op targets: its `section` or `parent`, else the anchor's container.
    func container(for target: ListOp.Target?, anchor: ListOp.Anchor, defaultKey: Int32? = nil)
        throws(ListValidationError) -> ItemContainer
    {
        switch target {
        case .section(let id): return .section(try existingSection(id, path: "section"))
        case .parent(let id): return .item(try existingItem(id, path: "parent"))
        case nil:
            switch anchor {
            case .after(let id): return itemIndex.value(for: try existingItem(id, path: "after"))!.containerKind
            case .before(let id): return itemIndex.value(for: try existingItem(id, path: "before"))!.containerKind
            case .end:
                if let defaultKey { return itemIndex.value(for: defaultKey)!.containerKind }
                throw ListValidationError(
                    .missingField, path: "section", reason: "give a section, a parent or an anchor")
            }
        }
    }

    /// Depth of the items inside `container` (0 for a section's top level).
    func childDepth(of container: ItemContainer) -> Int {
        switch container {
        case .section: 0
        case .item(let key): depth(of: key)! + 1
        }
    }

    /// The label of the item `id` if it is directly inside `container`.
    func label(ofItem id: String, in container: ItemContainer) -> OrderLabel? {
        guard let key = interner.lookup(id), let location = itemIndex.value(for: key),
            location.containerKind == container
        else { return nil }
        return location.label
    }

    /// Interns the ids of new item drafts and checks they are new, unique and within limits.
    func internNewItems(_ drafts: [ItemDraft], basePath: String, depth: Int) throws(ListValidationError) -> [Int32] {
        for (index, draft) in drafts.enumerated() where depth + draft.height > limits.maxDepth {
            throw ListValidationError(
                .tooDeep, path: "\(basePath)[\(index)]", reason: "children deeper than \(limits.maxDepth) levels")
        }
        var ids: [String] = []
        Self.collectIDs(drafts, into: &ids)
        guard itemIndex.count + ids.count <= limits.maxItems else {
            throw ListValidationError(
                .tooMany, path: basePath, reason: "more than \(limits.maxItems) items in the list")
        }
        let keys = interner.intern(ids)
        var seen = Set<Int32>()
        for (position, key) in keys.enumerated() where itemIndex.value(for: key) != nil || !seen.insert(key).inserted {
            var remaining = position
            var path = JSONPath()
            path.push(basePath)
            _ = Self.locate(&remaining, in: drafts, path: &path)
            throw path.error(.duplicateID, at: "id", "duplicate item id \"\(ids[position])\"")
        }
        return keys
    }

    mutating func insertItems(_ drafts: [ItemDraft], target: ListOp.Target?, anchor: ListOp.Anchor)
        throws(ListValidationError)
    {
        let container = try container(for: target, anchor: anchor)
        let keys = try internNewItems(drafts, basePath: "items", depth: childDepth(of: container))
        var tree = children(of: container)!
        let labels = try labels(in: tree, anchor: anchor, count: drafts.count) { label(ofItem: $0, in: container) }
        noteLabels(labels)
        var locations: [(Int32, ItemLocation)] = []
        var cursor = 0
        let (containerKey, isChild) = container.parts
        let nodes = Self.buildItemNodes(
            drafts, keys: keys, cursor: &cursor, container: containerKey, isChild: isChild, locations: &locations,
            labels: labels)
        for (label, node) in zip(labels, nodes) { tree.insert(node, for: label) }
        for (key, location) in locations {
            itemIndex.insert(location, for: key)
            touch(key)
        }
        setChildren(tree, of: container)
    }

    mutating func updateItem(_ draft: ItemDraft, path: String) throws(ListValidationError) {
        let key = try existingItem(draft.id, path: "\(path).id")
        let node = item(key: key)!
        guard let childDrafts = draft.children else {
            replaceNode(node.replacingContent(draft))
            return
        }
        node.children.forEach { _, child in
            unindex(child)
            return true
        }
        let keys = try internNewItems(childDrafts, basePath: "\(path).children", depth: depth(of: key)! + 1)
        var locations: [(Int32, ItemLocation)] = []
        var cursor = 0
        let children = Self.buildItems(
            childDrafts, keys: keys, cursor: &cursor, container: key, isChild: true, locations: &locations)
        for (childKey, location) in locations {
            itemIndex.insert(location, for: childKey)
            touch(childKey)
        }
        replaceNode(ItemNode(key: key, draft: draft, children: children))
    }

    mutating func moveItem(_ id: String, target: ListOp.Target?, anchor: ListOp.Anchor) throws(ListValidationError) {
        let key = try existingItem(id, path: "id")
        switch anchor {
        case .after(id):
            throw ListValidationError(.invalidAnchor, path: "after", reason: "an item cannot anchor itself")
        case .before(id):
            throw ListValidationError(.invalidAnchor, path: "before", reason: "an item cannot anchor itself")
        default: break
        }
        let container = try container(for: target, anchor: anchor, defaultKey: key)
        if case .item(let parentKey) = container {
            if parentKey == key || ancestry(of: parentKey)!.ancestors.contains(where: { $0.key == key }) {
                throw ListValidationError(.invalidAnchor, path: "parent", reason: "an item cannot move inside itself")
            }
        }
        let node = item(key: key)!
        guard childDepth(of: container) + node.height <= limits.maxDepth else {
            throw ListValidationError(.tooDeep, path: "id", reason: "children deeper than \(limits.maxDepth) levels")
        }
        touchSubtree(node)
        let old = itemIndex.value(for: key)!
        var source = children(of: old.containerKind)!
        source.remove(old.label)
        setChildren(source, of: old.containerKind)
        var tree = children(of: container)!
        let label = try labels(in: tree, anchor: anchor, count: 1) { self.label(ofItem: $0, in: container) }[0]
        noteLabels([label])
        tree.insert(node, for: label)
        let (containerKey, isChild) = container.parts
        itemIndex.insert(ItemLocation(container: containerKey, isChild: isChild, label: label), for: key)
        setChildren(tree, of: container)
    }
}

extension ItemLocation {
    var containerKind: ItemContainer { isChild ? .item(container) : .section(container) }
}

extension ItemContainer {
    var parts: (key: Int32, isChild: Bool) {
        switch self {
        case .section(let key): (key, false)
        case .item(let key): (key, true)
        }
    }
}
