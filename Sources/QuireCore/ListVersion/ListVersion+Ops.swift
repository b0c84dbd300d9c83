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

    fileprivate mutating func apply(_ op: ListOp) throws(ListValidationError) {
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

/// The next version of `base` made one op at a time, for a caller that reads the version between its ops (a source's
/// follower places each row among those placed before it): ``finished()`` is the version `base.applying(ops)` makes
/// of all of them, one version later than `base`, without a version made per op (nor a copy of the nodes an earlier
/// op of the draft made: they are the draft's alone).
///
/// Like a batch of ops, a draft is all or nothing: once an op cannot apply, the draft is refused whole.
public struct ListVersionDraft: Sendable {
    /// The version the draft builds on.
    public let base: ListVersion
    /// The ops applied so far on `base`, as they read now (a version's reads; not a version of its own until
    /// ``finished()``).
    public private(set) var current: ListVersion
    /// Ops applied since `base`.
    public private(set) var opCount = 0
    /// Why an op could not apply: the draft may hold part of it.
    private var failure: ListValidationError?

    public init(_ base: ListVersion) {
        self.base = base
        current = base
        current.pendingDelta = VersionDelta()
    }

    /// Applies `op` after those applied so far.
    ///
    /// - Throws: ``ListValidationError`` when it cannot apply, and again for every later op and ``finished()``.
    public mutating func apply(_ op: ListOp) throws(ListValidationError) {
        if let failure { throw failure }
        do {
            try current.apply(op)
        } catch {
            failure = error
            throw error
        }
        opCount += 1
    }

    /// The version the ops make of `base`: `base`'s next version, with what they changed in its change log.
    ///
    /// - Throws: the error of the op that could not apply.
    public func finished() throws(ListValidationError) -> ListVersion {
        if let failure { throw failure }
        var next = current
        next.version = base.nextVersion
        next.changeLog = base.changeLog.appending(current.pendingDelta, version: base.nextVersion)
        next.pendingDelta = VersionDelta()
        next.checkInvariants()
        return next
    }
}
