/// The visible order of a version given an expanded set, without materialising it: per section its
/// visible count and start, and per container the expanded items in it with the size of their visible
/// subtrees. Positions are found in O((*e* + log *n*)·*d*) for *e* expanded items, never by a walk over the
/// list.
struct VisibleLayout {
    struct Expanded {
        let rank: Int
        let key: Int32
        let size: Int
    }

    let version: ListVersion
    /// Expanded items whose ancestors are all expanded.
    let expandedKeys: Set<Int32>
    /// Per container, its expanded items sorted by rank.
    let groups: [ItemContainer: [Expanded]]
    /// Per section in order: the node, the first visible position and the visible count.
    let sections: [(node: SectionNode, start: Int, count: Int)]
    let total: Int

    init(version: ListVersion, expanded ids: Set<String>) {
        self.version = version
        var keys = Set<Int32>()
        for id in ids {
            if let key = version.interner.lookup(id), let node = version.item(key: key), !node.children.isEmpty {
                keys.insert(key)
            }
        }
        var visible = Set<Int32>()
        var byContainer: [ItemContainer: [Int32]] = [:]
        for key in keys {
            guard let chain = version.ancestry(of: key), chain.ancestors.allSatisfy({ keys.contains($0.key) }) else {
                continue
            }
            visible.insert(key)
            byContainer[version.itemIndex.value(for: key)!.containerKind, default: []].append(key)
        }
        var sizes: [Int32: Int] = [:]
        func size(of key: Int32) -> Int {
            if let known = sizes[key] { return known }
            var total = version.item(key: key)!.children.count
            for child in byContainer[.item(key)] ?? [] { total += size(of: child) }
            sizes[key] = total
            return total
        }
        var groups: [ItemContainer: [Expanded]] = [:]
        for (container, members) in byContainer {
            let tree = version.children(of: container)!
            groups[container] = members.map { key in
                Expanded(rank: tree.rank(of: version.itemIndex.value(for: key)!.label)!, key: key, size: size(of: key))
            }.sorted { $0.rank < $1.rank }
        }
        var sections: [(node: SectionNode, start: Int, count: Int)] = []
        sections.reserveCapacity(version.sections.count)
        var start = 0
        version.sections.forEach { _, node in
            let extra = groups[.section(node.key)]?.reduce(0) { $0 + $1.size } ?? 0
            sections.append((node, start, node.items.count + extra))
            start += node.items.count + extra
            return true
        }
        self.expandedKeys = visible
        self.groups = groups
        self.sections = sections
        self.total = start
    }

    /// Visible offset, within `container`'s visible run, of its direct child at `rank`.
    func offset(ofRank rank: Int, in container: ItemContainer) -> Int {
        var offset = rank
        for entry in groups[container] ?? [] where entry.rank < rank { offset += entry.size }
        return offset
    }

    /// Visible position of the item `key` across the whole list, or `nil` when it is hidden or absent.
    func position(of key: Int32) -> Int? {
        guard let chain = version.ancestry(of: key) else { return nil }
        for ancestor in chain.ancestors where !expandedKeys.contains(ancestor.key) { return nil }
        guard let sectionIndex = sectionIndex(of: chain.section) else { return nil }
        var path = [(key: key, label: version.itemIndex.value(for: key)!.label)] + chain.ancestors
        path.reverse()
        var container = ItemContainer.section(chain.section)
        var position = sections[sectionIndex].start
        for (level, step) in path.enumerated() {
            if level > 0 { position += 1 }
            let rank = version.children(of: container)!.rank(of: step.label)!
            position += offset(ofRank: rank, in: container)
            container = .item(step.key)
        }
        return position
    }

    /// Index of the first section that holds a visible position at or after `position` (an empty section
    /// at `position` counts), or the number of sections.
    ///
    /// - Complexity: O(log *s*).
    func firstSection(endingAfter position: Int) -> Int {
        var low = 0
        var high = sections.count
        while low < high {
            let middle = (low + high) / 2
            let section = sections[middle]
            if section.count > 0 ? section.start + section.count <= position : section.start < position {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// Index in ``sections`` of the section with `key`.
    func sectionIndex(of key: Int32) -> Int? {
        guard let label = version.sectionIndex.value(for: key) else { return nil }
        return version.sections.rank(of: label)
    }
}
