extension ListVersion {
    /// Decodes and validates a whole list document, `{ "sections": [...] }`.
    ///
    /// - Throws: ``ListValidationError`` naming the path of the first problem.
    /// - Complexity: O(*n*) in the size of the document.
    public static func decodeDocument(_ json: JSONValue, limits: ListLimits = ListLimits()) throws(ListValidationError)
        -> [SectionDraft]
    {
        var decoder = DraftDecoder(limits: limits)
        return try decoder.document(json)
    }

    /// A list built from a whole document: version 1 for a new list, or the stored version number when a
    /// list is loaded back from storage.
    ///
    /// - Parameters:
    ///   - document: `{ "sections": [...] }`.
    ///   - limits: the limits for this and every later write.
    ///   - interner: the id table of the lineage; a new one by default.
    ///   - version: the version number to give it (1 by default).
    /// - Throws: ``ListValidationError`` naming the path of the first problem (duplicate ids included).
    /// - Complexity: O(*n* log *n*).
    public init(
        document: JSONValue, limits: ListLimits = ListLimits(), interner: IdInterner = IdInterner(), version: UInt64 = 1
    ) throws(ListValidationError) {
        self = try ListVersion.empty(limits: limits, interner: interner).replacing(with: document)
            .renumbered(as: version)
    }

    /// This version as the first of a list, numbered `version`, with a change log that starts there: a list
    /// built from a document, and a list created again after a delete, which goes on from the deleted list's
    /// last version (``ListStore/retiredVersion(of:)``) so that no version number, and no `ETag` made of one,
    /// ever names two contents of a list.
    func renumbered(as version: UInt64) -> ListVersion {
        var renumbered = self
        renumbered.version = version
        renumbered.changeLog = ChangeLog(base: version)
        return renumbered
    }

    /// The next version, with the whole content replaced by `document` (a `PUT`).
    ///
    /// - Throws: ``ListValidationError`` naming the path of the first problem.
    /// - Complexity: O(*n* log *n*) in the size of the new document.
    public func replacing(with document: JSONValue) throws(ListValidationError) -> ListVersion {
        try replacing(with: Self.decodeDocument(document, limits: limits))
    }

    /// The next version, with the whole content replaced by already decoded sections.
    ///
    /// - Throws: ``ListValidationError`` for duplicate ids and exceeded limits.
    /// - Complexity: O(*n* log *n*).
    public func replacing(with drafts: [SectionDraft]) throws(ListValidationError) -> ListVersion {
        guard drafts.count <= limits.maxSections else {
            throw ListValidationError(.tooMany, path: "sections", reason: "more than \(limits.maxSections) sections")
        }
        var path = JSONPath()
        path.push("sections")
        let sectionKeys = interner.intern(drafts.map(\.id))
        var seenSections = Set<Int32>()
        for (index, key) in sectionKeys.enumerated() where !seenSections.insert(key).inserted {
            path.push(index)
            throw path.error(.duplicateID, at: "id", "duplicate section id \"\(drafts[index].id)\"")
        }
        var itemIDs: [String] = []
        for section in drafts { Self.collectIDs(section.items, into: &itemIDs) }
        guard itemIDs.count <= limits.maxItems else {
            throw ListValidationError(.tooMany, path: "sections", reason: "more than \(limits.maxItems) items")
        }
        let itemKeys = interner.intern(itemIDs)
        var seen = [Bool](repeating: false, count: interner.count)
        for (position, key) in itemKeys.enumerated() {
            if seen[Int(key)] { throw duplicatePath(of: position, in: drafts, id: itemIDs[position]) }
            seen[Int(key)] = true
        }
        var builtSections: [SectionNode] = []
        var locations: [(Int32, ItemLocation)] = []
        locations.reserveCapacity(itemKeys.count)
        var cursor = 0
        for (index, draft) in drafts.enumerated() {
            let items = Self.buildItems(
                draft.items, keys: itemKeys, cursor: &cursor, container: sectionKeys[index], isChild: false,
                locations: &locations)
            builtSections.append(
                SectionNode(
                    key: sectionKeys[index], id: draft.id, header: draft.header, footer: draft.footer, items: items))
        }
        let sectionLabels = OrderLabel.initial(count: drafts.count)
        let sectionOrder = sectionKeys.indices.sorted { sectionKeys[$0] < sectionKeys[$1] }
        locations.sort { $0.0 < $1.0 }
        return ListVersion(
            version: nextVersion, limits: limits, interner: interner,
            sections: PersistentTree(sortedElements: sectionLabels, builtSections),
            sectionIndex: PersistentTree(
                sortedElements: sectionOrder.map { sectionKeys[$0] }, sectionOrder.map { sectionLabels[$0] }),
            itemIndex: PersistentTree(sortedElements: locations.map(\.0), locations.map(\.1)))
    }

    /// Builds the tree of `drafts`, taking their keys from `keys` in depth-first order.
    static func buildItems(
        _ drafts: [ItemDraft], keys: [Int32], cursor: inout Int, container: Int32, isChild: Bool,
        locations: inout [(Int32, ItemLocation)], labels: [OrderLabel]? = nil
    ) -> PersistentTree<OrderLabel, ItemNode> {
        guard !drafts.isEmpty else { return ItemNode.noChildren }
        let labels = labels ?? OrderLabel.initial(count: drafts.count)
        let nodes = buildItemNodes(
            drafts, keys: keys, cursor: &cursor, container: container, isChild: isChild, locations: &locations,
            labels: labels)
        return PersistentTree(sortedElements: labels, nodes)
    }

    /// The nodes of `drafts`, under `labels` (one each), as ``buildItems(_:keys:cursor:container:isChild:locations:labels:)``
    /// makes them, without the tree that holds them: for a write that inserts them into a tree already there.
    static func buildItemNodes(
        _ drafts: [ItemDraft], keys: [Int32], cursor: inout Int, container: Int32, isChild: Bool,
        locations: inout [(Int32, ItemLocation)], labels: [OrderLabel]
    ) -> [ItemNode] {
        var nodes: [ItemNode] = []
        nodes.reserveCapacity(drafts.count)
        for (index, draft) in drafts.enumerated() {
            let key = keys[cursor]
            cursor += 1
            locations.append((key, ItemLocation(container: container, isChild: isChild, label: labels[index])))
            let children = Self.buildItems(
                draft.children ?? [], keys: keys, cursor: &cursor, container: key, isChild: true, locations: &locations)
            nodes.append(ItemNode(key: key, draft: draft, children: children))
        }
        return nodes
    }

    /// The ids of `drafts` and their descendants, depth first.
    static func collectIDs(_ drafts: [ItemDraft], into ids: inout [String]) {
        for draft in drafts {
            ids.append(draft.id)
            if let children = draft.children { collectIDs(children, into: &ids) }
        }
    }

    /// The error for the item at depth-first `position` of the document, with its path.
    private func duplicatePath(of position: Int, in drafts: [SectionDraft], id: String) -> ListValidationError {
        var path = JSONPath()
        path.push("sections")
        var remaining = position
        for (sectionIndex, section) in drafts.enumerated() {
            path.push(sectionIndex)
            path.push("items")
            if Self.locate(&remaining, in: section.items, path: &path) {
                return path.error(.duplicateID, at: "id", "duplicate item id \"\(id)\"")
            }
            path.pop()
            path.pop()
        }
        return path.error(.duplicateID, "duplicate item id \"\(id)\"")
    }

    /// Walks `drafts` depth first, consuming `remaining`; on reaching 0 leaves `path` at that item.
    static func locate(_ remaining: inout Int, in drafts: [ItemDraft], path: inout JSONPath) -> Bool {
        for (index, draft) in drafts.enumerated() {
            path.push(index)
            if remaining == 0 { return true }
            remaining -= 1
            if let children = draft.children {
                path.push("children")
                if locate(&remaining, in: children, path: &path) { return true }
                path.pop()
            }
            path.pop()
        }
        return false
    }
}
