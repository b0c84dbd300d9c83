extension ListVersion {
    /// Removes a section, its items and their index entries.
    mutating func removeSection(_ key: Int32) {
        let label = sectionIndex.value(for: key)!
        let section = sections.value(for: label)!
        section.items.forEach { _, item in
            unindex(item, recording: false)
            return true
        }
        sections.remove(label)
        sectionIndex.remove(key)
        pendingDelta.replacedSections.append(key)
    }

    /// The label of the section `id`, if it exists.
    func label(ofSection id: String) -> OrderLabel? {
        interner.lookup(id).flatMap { sectionIndex.value(for: $0) }
    }

    mutating func insertSections(_ drafts: [SectionDraft], anchor: ListOp.Anchor) throws(ListValidationError) {
        guard sections.count + drafts.count <= limits.maxSections else {
            throw ListValidationError(.tooMany, path: "sections", reason: "more than \(limits.maxSections) sections")
        }
        let sectionKeys = interner.intern(drafts.map(\.id))
        var seen = Set<Int32>()
        for (index, key) in sectionKeys.enumerated()
        where sectionIndex.value(for: key) != nil || !seen.insert(key).inserted {
            throw ListValidationError(
                .duplicateID, path: "sections[\(index)].id", reason: "duplicate section id \"\(drafts[index].id)\"")
        }
        var allItems: [ItemDraft] = []
        for draft in drafts { allItems.append(contentsOf: draft.items) }
        let itemKeys: [Int32]
        do throws(ListValidationError) {
            itemKeys = try internNewItems(allItems, basePath: "items", depth: 0)
        } catch {
            throw ListValidationError(error.kind, path: sectionItemPath(error.path, drafts), reason: error.reason)
        }
        let labels = try labels(in: sections, anchor: anchor, count: drafts.count) { label(ofSection: $0) }
        noteLabels(labels)
        var cursor = 0
        var locations: [(Int32, ItemLocation)] = []
        for (index, draft) in drafts.enumerated() {
            let items = Self.buildItems(
                draft.items, keys: itemKeys, cursor: &cursor, container: sectionKeys[index], isChild: false,
                locations: &locations)
            sections.insert(
                SectionNode(
                    key: sectionKeys[index], id: draft.id, header: draft.header, footer: draft.footer, items: items),
                for: labels[index])
            sectionIndex.insert(labels[index], for: sectionKeys[index])
            pendingDelta.replacedSections.append(sectionKeys[index])
        }
        // Recorded as changed: an id the list held before (its section removed in the same batch, or earlier in
        // the versions a session spans) names the same key, and the incremental diff locates only the items the
        // log names; unrecorded, such an item left every window that held it.
        for (key, location) in locations {
            itemIndex.insert(location, for: key)
            touch(key)
        }
    }

    /// Rewrites `items[k]…` (an index into all the sections' items in a row) as `sections[i].items[j]…`.
    private func sectionItemPath(_ path: String, _ drafts: [SectionDraft]) -> String {
        guard path.hasPrefix("items["), let close = path.firstIndex(of: "]"),
            var flat = Int(path[path.index(path.startIndex, offsetBy: 6)..<close])
        else { return "sections" }
        for (index, draft) in drafts.enumerated() {
            if flat < draft.items.count { return "sections[\(index)].items[\(flat)\(path[close...])" }
            flat -= draft.items.count
        }
        return "sections"
    }

    mutating func moveSection(_ id: String, anchor: ListOp.Anchor) throws(ListValidationError) {
        let key = try existingSection(id, path: "id")
        switch anchor {
        case .after(id):
            throw ListValidationError(.invalidAnchor, path: "after", reason: "a section cannot anchor itself")
        case .before(id):
            throw ListValidationError(.invalidAnchor, path: "before", reason: "a section cannot anchor itself")
        default: break
        }
        if case .after(let other) = anchor, label(ofSection: other) == nil {
            throw ListValidationError(.unknownID, path: "after", reason: "no section with id \"\(other)\"")
        }
        if case .before(let other) = anchor, label(ofSection: other) == nil {
            throw ListValidationError(.unknownID, path: "before", reason: "no section with id \"\(other)\"")
        }
        pendingDelta.reordersSections = true
        let old = sectionIndex.value(for: key)!
        let section = sections.remove(old)!
        let label = try labels(in: sections, anchor: anchor, count: 1) { self.label(ofSection: $0) }[0]
        noteLabels([label])
        sections.insert(section, for: label)
        sectionIndex.insert(label, for: key)
    }
}
