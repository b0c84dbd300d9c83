extension ListVersion {
    /// The next version, with an ops body (`{ "ops": [...] }`) applied: all ops or none.
    ///
    /// - Throws: ``OpError`` with the index of the first op that is invalid or cannot apply.
    /// - Complexity: O(*k* log *n*) for ops touching *k* items in a list of *n*.
    public func applying(opsDocument json: JSONValue) throws(OpError) -> ListVersion {
        try applying(ListOp.decodeBatch(json, limits: limits))
    }

    /// The next version, with `ops` applied in order: all of them or none.
    ///
    /// Nothing is shared with readers until the whole batch has applied, so a failing op leaves no trace.
    ///
    /// - Throws: ``OpError`` with the index of the first op that cannot apply.
    /// - Complexity: O(*k* log *n*) for ops touching *k* items in a list of *n*.
    public func applying(_ ops: [ListOp]) throws(OpError) -> ListVersion {
        var next = self
        next.pendingDelta = VersionDelta()
        for (index, op) in ops.enumerated() {
            do throws(ListValidationError) {
                try next.apply(op)
            } catch {
                throw OpError(opIndex: index, error: error)
            }
        }
        next.version = nextVersion
        next.changeLog = changeLog.appending(next.pendingDelta, version: nextVersion)
        next.pendingDelta = VersionDelta()
        next.checkInvariants()
        return next
    }

    private mutating func apply(_ op: ListOp) throws(ListValidationError) {
        switch op {
        case .insertItems(let items, let target, let anchor):
            try insertItems(items, target: target, anchor: anchor)
        case .removeItems(let ids):
            for (index, id) in ids.enumerated() {
                let key = try existingItem(id, path: "ids[\(index)]")
                removeItem(key)
            }
        case .updateItems(let items):
            for (index, draft) in items.enumerated() {
                try updateItem(draft, path: "items[\(index)]")
            }
        case .moveItem(let id, let target, let anchor):
            try moveItem(id, target: target, anchor: anchor)
        case .insertSections(let drafts, let anchor):
            try insertSections(drafts, anchor: anchor)
        case .removeSections(let ids):
            for (index, id) in ids.enumerated() {
                let key = try existingSection(id, path: "ids[\(index)]")
                removeSection(key)
            }
        case .updateSection(let id, let header, let footer):
            let key = try existingSection(id, path: "id")
            let section = self.section(key: key)!
            pendingDelta.updatedSections.append(key)
            var newHeader = section.header
            var newFooter = section.footer
            if case .set(let bytes) = header { newHeader = bytes }
            if case .set(let bytes) = footer { newFooter = bytes }
            sections.insert(
                section.replacingSupplementaries(header: newHeader, footer: newFooter),
                for: sectionIndex.value(for: key)!)
        case .moveSection(let id, let anchor):
            try moveSection(id, anchor: anchor)
        }
    }

    /// The key of an existing item, or an `unknownID` error at `path`.
    func existingItem(_ id: String, path: String) throws(ListValidationError) -> Int32 {
        guard let key = interner.lookup(id), itemIndex.value(for: key) != nil else {
            throw ListValidationError(.unknownID, path: path, reason: "no item with id \"\(id)\"")
        }
        return key
    }

    /// The key of an existing section, or an `unknownID` error at `path`.
    func existingSection(_ id: String, path: String) throws(ListValidationError) -> Int32 {
        guard let key = interner.lookup(id), sectionIndex.value(for: key) != nil else {
            throw ListValidationError(.unknownID, path: path, reason: "no section with id \"\(id)\"")
        }
        return key
    }

    /// `count` labels for the anchor's place in `tree`, whose elements' labels are found with `label(of:)`.
    func labels<Value>(
        in tree: PersistentTree<OrderLabel, Value>, anchor: ListOp.Anchor, count: Int,
        label: (String) -> OrderLabel?
    ) throws(ListValidationError) -> [OrderLabel] {
        switch anchor {
        case .end:
            return OrderLabel.between(tree.lastKey, nil, count: count)
        case .after(let id):
            guard let anchorLabel = label(id), let rank = tree.rank(of: anchorLabel) else {
                throw ListValidationError(.invalidAnchor, path: "after", reason: "\"\(id)\" is not a sibling here")
            }
            return OrderLabel.between(anchorLabel, tree.elementIfPresent(at: rank + 1)?.key, count: count)
        case .before(let id):
            guard let anchorLabel = label(id), let rank = tree.rank(of: anchorLabel) else {
                throw ListValidationError(.invalidAnchor, path: "before", reason: "\"\(id)\" is not a sibling here")
            }
            return OrderLabel.between(tree.elementIfPresent(at: rank - 1)?.key, anchorLabel, count: count)
        }
    }
}
