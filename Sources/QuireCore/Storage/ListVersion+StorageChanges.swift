extension ListVersion {
    /// What changed since `previous`, as rows: what a store must write to go from the rows of `previous`
    /// to the rows of this version.
    ///
    /// Unchanged parts are shared between consecutive versions (the same nodes), so the walk skips every
    /// subtree both versions share. Inside a changed container, the leaves both trees share are skipped
    /// too when the versions come from ops (labels are kept by ops); after a whole replacement (`PUT`)
    /// nothing is shared, and the items that kept their place are the longest run that kept its order
    /// (a longest increasing subsequence), so a `PUT` that changes 1% of a list writes about 1% of rows.
    ///
    /// - Parameters:
    ///   - previous: the version the store holds (`nil`: nothing stored yet).
    ///   - keepsLabels: this version was made from `previous` by ops, which keep the label of every item they do
    ///     not place: an item kept its place exactly when the old and the new container hold it under the same
    ///     label, found by merging the two containers' unshared leaves in label order.
    /// - Complexity: after ops touching *c* items: O(*s* + *c* log *n*) for *s* sections and *n* items (the
    ///   walk goes down only the paths the ops copied: ``PersistentTree/leafRuns(since:)``); after a replacement:
    ///   O(*n* log *n*).
    public func storageChanges(since previous: ListVersion?, keepsLabels: Bool = false) -> StorageChanges {
        var walk = StorageWalk(
            old: previous ?? .empty(limits: limits, interner: interner), new: self,
            keepsLabels: keepsLabels && previous != nil)
        walk.compareSections()
        return walk.changes
    }
}

/// The walk behind ``ListVersion/storageChanges(since:keepsLabels:)``.
private struct StorageWalk {
    typealias ItemTree = PersistentTree<OrderLabel, ItemNode>

    let old: ListVersion
    let new: ListVersion
    let keepsLabels: Bool
    var changes = StorageChanges()

    init(old: ListVersion, new: ListVersion, keepsLabels: Bool) {
        self.old = old
        self.new = new
        self.keepsLabels = keepsLabels
    }

    mutating func compareSections() {
        guard old.sections.root !== new.sections.root else { return }
        if keepsLabels {
            compareSectionsByLabels()
            return
        }
        let oldSections = old.sections.values
        let newSections = new.sections.values
        var oldRanks: [Int32: Int] = [:]
        oldRanks.reserveCapacity(oldSections.count)
        for (rank, section) in oldSections.enumerated() { oldRanks[section.key] = rank }
        // The sections that keep their place: the longest run of surviving sections in their old order.
        var candidates: [Int] = []
        var ranks: [Int] = []
        for (index, section) in newSections.enumerated() {
            if let rank = oldRanks[section.key] {
                candidates.append(index)
                ranks.append(rank)
            }
        }
        var kept = [Bool](repeating: false, count: newSections.count)
        for (position, isKept) in longestIncreasingSubsequenceMask(ranks).enumerated() where isKept {
            kept[candidates[position]] = true
        }
        for section in oldSections where new.sectionIndex.value(for: section.key) == nil {
            changes.removedSections.append(section.id)
            section.items.forEach { _, item in
                depart(item)
                return true
            }
        }
        var run: StorageChanges.SectionRun?
        var lastKept: String?
        for (index, section) in newSections.enumerated() {
            let previous = oldRanks[section.key].map { oldSections[$0] }
            place(section, previous: previous, isKept: kept[index], run: &run, lastKept: &lastKept)
        }
        if let run { changes.placedSections.append(run) }
    }

    /// One section of the new version, in order: kept in place (its row updated when its header or footer
    /// changed) or added to the open run of placed sections; then its items compared with those it had.
    private mutating func place(
        _ section: SectionNode, previous: SectionNode?, isKept: Bool, run: inout StorageChanges.SectionRun?,
        lastKept: inout String?
    ) {
        let row = StorageChanges.Section(id: section.id, header: section.header, footer: section.footer)
        if isKept {
            if var open = run {
                open.before = section.id
                changes.placedSections.append(open)
                run = nil
            }
            lastKept = section.id
            if let previous, previous !== section,
                previous.header != section.header || previous.footer != section.footer
            {
                changes.updatedSections.append(row)
            }
        } else {
            if run == nil { run = StorageChanges.SectionRun(after: lastKept, before: nil, sections: []) }
            run!.sections.append(row)
        }
        if previous !== section {
            compare(previous?.items, section.items, in: .section(section.id))
        }
    }

    /// One item of the new version, in order, directly inside `container`: kept in place (its row updated when
    /// its content changed) or added to the open run of placed items (moved when `previous`, its old node, is
    /// elsewhere); then its children compared with those it had.
    private mutating func place(
        _ node: ItemNode, previous: ItemNode?, isKept: Bool, in container: StorageChanges.Container,
        run: inout StorageChanges.ItemRun?, lastKept: inout String?
    ) {
        if isKept {
            if var open = run {
                open.before = node.id
                changes.placedItems.append(open)
                run = nil
            }
            lastKept = node.id
            if let previous, previous !== node, previous.hash != node.hash || previous.encoded != node.encoded {
                changes.updatedItems.append(StorageChanges.Item(id: node.id, body: node.encoded))
            }
        } else {
            if previous != nil { changes.movedItems.append(node.id) }
            if run == nil { run = StorageChanges.ItemRun(container: container, after: lastKept, items: []) }
            run!.items.append(StorageChanges.Item(id: node.id, body: node.encoded))
        }
        if previous !== node {
            compare(previous?.children, node.children, in: .item(node.id))
        }
    }

    /// A leaf both versions share: every item in it kept its place; it closes the open run of placed items.
    private mutating func keep(_ leaf: ItemTree.Node, run: inout StorageChanges.ItemRun?, lastKept: inout String?) {
        if var open = run {
            open.before = leaf.values[0].id
            changes.placedItems.append(open)
            run = nil
        }
        lastKept = leaf.values[leaf.width - 1].id
    }

    /// ``compareSections()`` for versions made by ops: both versions' sections merged in label order, as
    /// ``compareByLabels(_:_:in:)`` merges items.
    private mutating func compareSectionsByLabels() {
        func entries(_ version: ListVersion) -> [(label: OrderLabel, section: SectionNode)] {
            var entries: [(label: OrderLabel, section: SectionNode)] = []
            entries.reserveCapacity(version.sectionCount)
            version.sections.forEach { label, section in
                entries.append((label, section))
                return true
            }
            return entries
        }
        let oldEntries = entries(old)
        var oldIndex = 0
        func depart(_ section: SectionNode) {
            // A section still in the list moved: the new side writes its row where it now is.
            guard new.sectionIndex.value(for: section.key) == nil else { return }
            changes.removedSections.append(section.id)
            section.items.forEach { _, item in
                self.depart(item)
                return true
            }
        }
        var run: StorageChanges.SectionRun?
        var lastKept: String?
        new.sections.forEach { label, section in
            while oldIndex < oldEntries.count, oldEntries[oldIndex].label < label {
                depart(oldEntries[oldIndex].section)
                oldIndex += 1
            }
            var previous: SectionNode?
            var isKept = false
            if oldIndex < oldEntries.count, oldEntries[oldIndex].label == label {
                let entry = oldEntries[oldIndex].section
                oldIndex += 1
                if entry.key == section.key {
                    previous = entry
                    isKept = true
                } else {
                    depart(entry)
                }
            }
            if !isKept { previous = old.section(key: section.key) }
            place(section, previous: previous, isKept: isKept, run: &run, lastKept: &lastKept)
            return true
        }
        while oldIndex < oldEntries.count {
            depart(oldEntries[oldIndex].section)
            oldIndex += 1
        }
        if let run { changes.placedSections.append(run) }
    }

    /// An item of the old version that left its container: gone from the list (with every descendant
    /// that is gone too), or moved, which the new side handles where it now lives.
    private mutating func depart(_ node: ItemNode) {
        guard new.itemIndex.value(for: node.key) == nil else { return }
        changes.removedItems.append(node.id)
        node.children.forEach { _, child in
            depart(child)
            return true
        }
    }

    /// Compares the items directly inside one container, then recurses into the items that changed.
    private mutating func compare(_ oldTree: ItemTree?, _ newTree: ItemTree, in container: StorageChanges.Container) {
        if let oldTree, oldTree.root === newTree.root { return }
        if keepsLabels, let oldTree {
            compareByLabels(oldTree, newTree, in: container)
            return
        }
        let oldLeaves = oldTree?.leaves ?? []
        let newLeaves = newTree.leaves
        let oldLeafSet = Set(oldLeaves.map(ObjectIdentifier.init))
        let newLeafSet = Set(newLeaves.map(ObjectIdentifier.init))
        let sharesLeaves = newLeaves.contains { oldLeafSet.contains(ObjectIdentifier($0)) }
        let containerKey = new.containerKey(container)
        let keptKeys: Set<Int32>? = sharesLeaves ? nil : keptByOrder(oldLeaves, newLeaves, containerKey: containerKey)

        for leaf in oldLeaves where !newLeafSet.contains(ObjectIdentifier(leaf)) {
            for node in leaf.values { depart(node) }
        }
        var run: StorageChanges.ItemRun?
        var lastKept: String?
        for leaf in newLeaves {
            if sharesLeaves && oldLeafSet.contains(ObjectIdentifier(leaf)) {
                keep(leaf, run: &run, lastKept: &lastKept)
                continue
            }
            for (label, node) in zip(leaf.keys, leaf.values) {
                let oldLocation = old.itemIndex.value(for: node.key)
                let isKept: Bool
                if let keptKeys {
                    isKept = keptKeys.contains(node.key)
                } else if let oldLocation, let containerKey {
                    isKept =
                        oldLocation.label == label && oldLocation.container == containerKey.key
                        && oldLocation.isChild == containerKey.isChild
                } else {
                    isKept = false
                }
                let previous = oldLocation == nil ? nil : old.item(key: node.key)
                place(node, previous: previous, isKept: isKept, in: container, run: &run, lastKept: &lastKept)
            }
        }
        if let run { changes.placedItems.append(run) }
    }

    /// ``compare(_:_:in:)`` for versions made by ops: the unshared leaves of both trees are merged in label order.
    /// A new item under the label the same item had is kept; any other new item is placed (moved when the old
    /// version had it elsewhere); an old item whose label no longer holds it departs.
    ///
    /// - Complexity: O(*u* + *p* log *n*) for *u* items in unshared leaves and *p* placed.
    private mutating func compareByLabels(
        _ oldTree: ItemTree, _ newTree: ItemTree, in container: StorageChanges.Container
    ) {
        let (runs, oldUnshared) = newTree.leafRuns(since: oldTree)
        var oldLeaf = 0
        var oldSlot = 0
        func oldEntry() -> (label: OrderLabel, node: ItemNode)? {
            guard oldLeaf < oldUnshared.count else { return nil }
            let leaf = oldUnshared[oldLeaf]
            return (leaf.keys[oldSlot], leaf.values[oldSlot])
        }
        func advanceOld() {
            oldSlot += 1
            if oldSlot == oldUnshared[oldLeaf].width {
                oldLeaf += 1
                oldSlot = 0
            }
        }
        // Old leaves left empty by a removal hold nothing to merge.
        while oldLeaf < oldUnshared.count, oldUnshared[oldLeaf].width == 0 { oldLeaf += 1 }
        var run: StorageChanges.ItemRun?
        var lastKept: String?
        // The last subtree kept whole since an unshared leaf: its last item anchors the next run of placed items,
        // read only when one follows (consecutive shared subtrees are not read at all).
        var keptSince: (parent: ItemTree.Node, index: Int)?
        for part in runs {
            let leaf: ItemTree.Node
            switch part {
            case .shared(let parent, let index):
                if var open = run, let first = ItemTree.firstValue(ofChild: index, of: parent) {
                    open.before = first.id
                    changes.placedItems.append(open)
                    run = nil
                }
                keptSince = (parent, index)
                continue
            case .unshared(let node): leaf = node
            }
            if let (parent, index) = keptSince {
                lastKept = ItemTree.lastValue(ofChild: index, of: parent)?.id ?? lastKept
                keptSince = nil
            }
            for (label, node) in zip(leaf.keys, leaf.values) {
                while let entry = oldEntry(), entry.label < label {
                    depart(entry.node)
                    advanceOld()
                }
                var previous: ItemNode?
                if let entry = oldEntry(), entry.label == label {
                    advanceOld()
                    if entry.node.key == node.key { previous = entry.node } else { depart(entry.node) }
                }
                let isKept = previous != nil
                if !isKept { previous = old.item(key: node.key) }
                place(node, previous: previous, isKept: isKept, in: container, run: &run, lastKept: &lastKept)
            }
        }
        while let entry = oldEntry() {
            depart(entry.node)
            advanceOld()
        }
        if let run { changes.placedItems.append(run) }
    }

    /// After a replacement: the keys of the items that keep their place, the longest run of the
    /// container's surviving items that kept their old order.
    private func keptByOrder(
        _ oldLeaves: [ItemTree.Node], _ newLeaves: [ItemTree.Node], containerKey: (key: Int32, isChild: Bool)?
    ) -> Set<Int32> {
        var oldRanks: [Int32: Int] = [:]
        var rank = 0
        for leaf in oldLeaves {
            for node in leaf.values {
                oldRanks[node.key] = rank
                rank += 1
            }
        }
        var keys: [Int32] = []
        var ranks: [Int] = []
        for leaf in newLeaves {
            for node in leaf.values {
                if let rank = oldRanks[node.key] {
                    keys.append(node.key)
                    ranks.append(rank)
                }
            }
        }
        var kept = Set<Int32>()
        for (index, isKept) in longestIncreasingSubsequenceMask(ranks).enumerated() where isKept {
            kept.insert(keys[index])
        }
        return kept
    }
}

extension ListVersion {
    /// The interned key of a storage container, as the item index records it.
    fileprivate func containerKey(_ container: StorageChanges.Container) -> (key: Int32, isChild: Bool)? {
        switch container {
        case .section(let id): interner.lookup(id).map { ($0, false) }
        case .item(let id): interner.lookup(id).map { ($0, true) }
        }
    }
}

extension PersistentTree {
    /// The leaves, in order (none for an empty tree).
    ///
    /// - Complexity: O(*n* / *b*) for nodes of *b* elements: only inner nodes are visited.
    var leaves: [Node] {
        guard !isEmpty else { return [] }
        var result: [Node] = []
        // Every leaf but a lone root holds `minimum` elements or more; past 64 leaves (a large list) the array grows.
        result.reserveCapacity(min(count / Self.minimum(leaf: true) + 1, 64))
        Self.collectLeaves(root, into: &result)
        return result
    }

    private static func collectLeaves(_ node: Node, into result: inout [Node]) {
        if node.isLeaf {
            if node.width > 0 { result.append(node) }
            return
        }
        for child in node.children { collectLeaves(child, into: &result) }
    }
}
