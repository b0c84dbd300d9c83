/// What names a view's chain of versions apart from its list's and from every other view's: the versions of a
/// view share their list's id table (and its item nodes), so the table alone does not tell a view's answers from
/// the list's (``SharedAnswers``).
public final class ViewLineage: Sendable {
    public init() {}
}

/// One step of a view after its list moved on (``ListVersion/followingList(from:to:matches:only:)``).
enum ViewStep {
    /// Nothing in the view changed.
    case unchanged
    /// The view's next version.
    case next(ListVersion)
    /// The list's change cannot be followed item by item (a new lineage, sections added, removed or reordered, a
    /// change log that no longer reaches back): the view is built again from the list.
    case rebuild
}

extension ListVersion {
    /// What tells this version's chain apart in caches of answers: its view's identity, else its id table.
    var lineageIdentity: ObjectIdentifier {
        viewLineage.map { ObjectIdentifier($0) } ?? ObjectIdentifier(interner)
    }

    /// A view's first version: the top-level items of this version that `matches` accepts, in order, each with
    /// its children, in their sections (a section without one is left out, its header and footer with it).
    ///
    /// The view shares this version's id table, position labels and nodes: it costs new nodes for the sections
    /// and the trees above the items, not the items.
    ///
    /// - Parameters:
    ///   - version: the number of the view's first version.
    ///   - lineage: the view's identity (see ``ViewLineage``).
    /// - Complexity: O(*n*) calls of `matches` for *n* top-level items, plus O(*m* log *m*) for *m* items kept.
    func filtered(version: UInt64, lineage: ViewLineage, matches: (ItemNode) -> Bool) -> ListVersion {
        var sectionLabels: [OrderLabel] = []
        var sectionNodes: [SectionNode] = []
        var sectionEntries: [(key: Int32, label: OrderLabel)] = []
        var locations: [(key: Int32, location: ItemLocation)] = []
        sections.forEach { sectionLabel, section in
            var labels: [OrderLabel] = []
            var nodes: [ItemNode] = []
            section.items.forEach { label, node in
                if matches(node) {
                    labels.append(label)
                    nodes.append(node)
                    Self.collectLocations(
                        of: node, at: ItemLocation(container: section.key, isChild: false, label: label),
                        into: &locations)
                }
                return true
            }
            if !nodes.isEmpty {
                sectionLabels.append(sectionLabel)
                sectionNodes.append(section.replacingItems(PersistentTree(sortedElements: labels, nodes)))
                sectionEntries.append((section.key, sectionLabel))
            }
            return true
        }
        sectionEntries.sort { $0.key < $1.key }
        locations.sort { $0.key < $1.key }
        var view = ListVersion(
            version: version, limits: limits, interner: interner,
            sections: PersistentTree(sortedElements: sectionLabels, sectionNodes),
            sectionIndex: PersistentTree(sortedElements: sectionEntries.map(\.key), sectionEntries.map(\.label)),
            itemIndex: PersistentTree(sortedElements: locations.map(\.key), locations.map(\.location)))
        view.viewLineage = lineage
        view.longestLabel = longestLabel
        return view
    }

    /// `node` at `location`, and each item below it at its own.
    private static func collectLocations(
        of node: ItemNode, at location: ItemLocation, into locations: inout [(key: Int32, location: ItemLocation)]
    ) {
        locations.append((node.key, location))
        node.children.forEach { label, child in
            collectLocations(
                of: child, at: ItemLocation(container: node.key, isChild: true, label: label), into: &locations)
            return true
        }
    }

    /// The step of this view (the view of `old`) when its list moved from `old` to `new`: each top-level item the
    /// list's change log names (or whose children it names) leaves the view, comes into it, moves or changes in
    /// it as `matches` says of its new content; sections come into the view with their first matching item and
    /// leave it with their last.
    ///
    /// - Parameter only: when given, the top-level items to follow among those that changed (the others are known
    ///   to be neither in the view before nor after, by the filter's index).
    /// - Complexity: O(*c* log *n*) for *c* changed items.
    func followingList(
        from old: ListVersion, to new: ListVersion, matches: (ItemNode) -> Bool, only: Set<Int32>? = nil
    ) -> ViewStep {
        guard new.interner === old.interner, new.interner === interner, old.version <= new.version,
            let delta = new.changeLog.changes(since: old.version), delta.replacedSections.isEmpty,
            !delta.reordersSections
        else { return old.version == new.version && old.interner === new.interner ? .unchanged : .rebuild }
        var view = self
        view.pendingDelta = VersionDelta()
        for key in delta.updatedSections {
            guard let label = view.sectionIndex.value(for: key), let updated = new.section(key: key),
                let held = view.sections.value(for: label)
            else { continue }
            view.sections.insert(
                held.replacingSupplementaries(header: updated.header, footer: updated.footer), for: label)
            view.pendingDelta.updatedSections.append(key)
        }
        var tops = Set<Int32>()
        for key in delta.items {
            if let top = old.topLevelKey(of: key) { tops.insert(top) }
            if let top = new.topLevelKey(of: key) { tops.insert(top) }
        }
        if let only { tops.formIntersection(only) }
        for top in tops.sorted() {
            let held = view.topLevel(top)
            let current = new.topLevel(top).flatMap { matches($0.node) ? $0 : nil }
            if let held, let current, held.node === current.node, held.label == current.label,
                held.section == current.section
            {
                continue
            }
            if let held { view.removeTopLevel(top, from: held.section) }
            if let current {
                view.insertTopLevel(current.node, section: current.section, label: current.label, from: new)
            }
        }
        guard !view.pendingDelta.isEmpty else { return .unchanged }
        view.version = nextVersion
        view.changeLog = changeLog.appending(view.pendingDelta, version: view.version)
        view.pendingDelta = VersionDelta()
        view.checkInvariants()
        return .next(view)
    }

    /// The key of the top-level item that holds the item `key` (itself when it is at the top level).
    func topLevelKey(of key: Int32) -> Int32? {
        guard let (ancestors, _) = ancestry(of: key) else { return nil }
        return ancestors.last?.key ?? key
    }

    /// The top-level item `key` with its section's key and its label, or `nil` when it is not at the top level.
    func topLevel(_ key: Int32) -> (node: ItemNode, section: Int32, label: OrderLabel)? {
        guard let location = itemIndex.value(for: key), !location.isChild,
            let node = section(key: location.container)?.items.value(for: location.label)
        else { return nil }
        return (node, location.container, location.label)
    }

    /// Removes the top-level item `key` (and what it holds) from the view, and its section when it was the last.
    private mutating func removeTopLevel(_ key: Int32, from section: Int32) {
        removeItem(key)
        if self.section(key: section)?.items.isEmpty == true { removeSection(section) }
    }

    /// Puts `node` at the top level of `section` under `label`, as `list` (the view's list) holds it, with the
    /// section when the view does not hold it yet.
    private mutating func insertTopLevel(_ node: ItemNode, section: Int32, label: OrderLabel, from list: ListVersion) {
        if sectionIndex.value(for: section) == nil, let sectionLabel = list.sectionIndex.value(for: section),
            let listed = list.section(key: section)
        {
            sections.insert(listed.replacingItems(PersistentTree()), for: sectionLabel)
            sectionIndex.insert(sectionLabel, for: section)
            pendingDelta.replacedSections.append(section)
        }
        var locations: [(key: Int32, location: ItemLocation)] = []
        Self.collectLocations(
            of: node, at: ItemLocation(container: section, isChild: false, label: label), into: &locations)
        for (key, location) in locations { itemIndex.insert(location, for: key) }
        var items = children(of: .section(section)) ?? PersistentTree()
        items.insert(node, for: label)
        setChildren(items, of: .section(section))
        touchSubtree(node)
        longestLabel = max(longestLabel, list.longestLabel)
    }
}
