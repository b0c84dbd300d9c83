extension ListVersion {
    /// Whether the id table holds far more ids than this version uses, or labels have grown long: a list
    /// that receives ever new ids (a feed: items inserted, then removed) would otherwise grow its table
    /// without end, and one that always inserts at the same place its labels.
    ///
    /// - Complexity: O(1).
    public var wantsCompaction: Bool {
        interner.count > 2 * (itemCount + sectionCount) + 4_096 || longestLabel > 16
    }

    /// Records the labels given out by a write (see ``longestLabel``).
    mutating func noteLabels(_ labels: [OrderLabel]) {
        for label in labels where label.digitCount > longestLabel { longestLabel = label.digitCount }
    }

    /// The same version on a fresh id table that holds only the ids it uses, with labels laid out afresh:
    /// the same number, order and bytes, new keys and labels. Nothing outside the lineage depends on
    /// either (stores keep their own positions). The old table is freed once no session holds a version
    /// built on it; a session that still does is answered by matching its window to this version by id
    /// (see ``Window/rekeyed(to:)``), so it sees no spurious replacement. Starts a new change log.
    ///
    /// - Complexity: O(*n* log *n*) (every node is rebuilt; amortized over the ids that came and went).
    public func compacted() -> ListVersion {
        let fresh = IdInterner()
        let sectionLabels = OrderLabel.initial(count: sections.count)
        var sectionNodes: [SectionNode] = []
        var locations: [(Int32, ItemLocation)] = []
        locations.reserveCapacity(itemCount)
        sections.forEach { _, section in
            let key = fresh.intern(section.id)
            let items = Self.rekey(section.items, container: key, isChild: false, interner: fresh, into: &locations)
            sectionNodes.append(
                SectionNode(key: key, id: section.id, header: section.header, footer: section.footer, items: items))
            return true
        }
        let byKey = sectionNodes.indices.sorted { sectionNodes[$0].key < sectionNodes[$1].key }
        locations.sort { $0.0 < $1.0 }
        return ListVersion(
            version: version, limits: limits, interner: fresh,
            sections: PersistentTree(sortedElements: sectionLabels, sectionNodes),
            sectionIndex: PersistentTree(
                sortedElements: byKey.map { sectionNodes[$0].key }, byKey.map { sectionLabels[$0] }),
            itemIndex: PersistentTree(sortedElements: locations.map(\.0), locations.map(\.1)))
    }

    private static func rekey(
        _ tree: PersistentTree<OrderLabel, ItemNode>, container: Int32, isChild: Bool, interner: IdInterner,
        into locations: inout [(Int32, ItemLocation)]
    ) -> PersistentTree<OrderLabel, ItemNode> {
        let labels = OrderLabel.initial(count: tree.count)
        var nodes: [ItemNode] = []
        nodes.reserveCapacity(tree.count)
        tree.forEach { _, node in
            let key = interner.intern(node.id)
            let label = labels[nodes.count]
            locations.append((key, ItemLocation(container: container, isChild: isChild, label: label)))
            let children = rekey(node.children, container: key, isChild: true, interner: interner, into: &locations)
            nodes.append(
                ItemNode(
                    key: key, id: node.id, encoded: node.encoded, idEnd: node.idEnd, hash: node.hash, children: children
                ))
            return true
        }
        return PersistentTree(sortedElements: labels, nodes)
    }
}

extension Window {
    /// This window with the keys of `interner` (matched by id), so that it can be diffed against a window
    /// of the compacted lineage: ids `interner` does not know get keys of their own, above every key it
    /// has given.
    ///
    /// - Complexity: O(*k*) lookups for a window of *k* items.
    func rekeyed(to interner: IdInterner) -> Window {
        guard interner !== self.interner else { return self }
        var unknown = Int32(clamping: interner.count)
        var assigned: [String: Int32] = [:]
        func key(_ id: String) -> Int32 {
            if let key = interner.lookup(id) ?? assigned[id] { return key }
            unknown += 1
            assigned[id] = unknown
            return unknown
        }
        var maximumKey: Int32 = -1
        let sections = self.sections.map { section in
            let items = section.items.map { item in
                let rekeyed = WindowItem(
                    node: item.node, parent: item.parent, depth: item.depth, key: key(item.id),
                    parentKey: item.parent.map { key($0.id) })
                maximumKey = max(maximumKey, rekeyed.key)
                return rekeyed
            }
            return WindowSection(
                node: section.node, offset: section.offset, count: section.count, items: items, key: key(section.id))
        }
        return Window(
            version: version, expanded: expanded, start: start, count: count, total: total, sections: sections,
            maximumKey: maximumKey, interner: interner)
    }
}
