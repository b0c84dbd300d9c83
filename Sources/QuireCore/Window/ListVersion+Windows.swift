extension ListVersion {
    /// Number of visible items given the expanded ids.
    ///
    /// - Complexity: O(*s* + *e*·*d* log *n*) for *s* sections and *e* expanded ids.
    public func visibleCount(expanded: Set<String> = []) -> Int {
        VisibleLayout(version: self, expanded: expanded).total
    }

    /// Visible position of an item (across sections), or `nil` when it is absent or inside a collapsed item.
    ///
    /// - Complexity: O(*s* + *e*·*d* log *n*), never linear in the number of items.
    public func visiblePosition(of id: String, expanded: Set<String> = []) -> Int? {
        guard let key = interner.lookup(id) else { return nil }
        return VisibleLayout(version: self, expanded: expanded).position(of: key)
    }

    /// The window holding visible positions `range` (clamped to the list).
    ///
    /// Sections the run touches are included with their slice. An empty section belongs to the run that
    /// starts at or before its place and ends after it (or ends the list): every empty section appears in
    /// exactly one of a sequence of consecutive pages.
    ///
    /// - Complexity: O(*s* + *k* + *e*·*d* log *n*) for a window of *k* items.
    public func window(range: Range<Int>, expanded: Set<String> = []) -> Window {
        let layout = VisibleLayout(version: self, expanded: expanded)
        return window(range: range, layout: layout, expanded: expanded)
    }

    /// The first `limit` visible items.
    ///
    /// - Complexity: as ``window(range:expanded:)``.
    public func firstPage(limit: Int, expanded: Set<String> = []) -> Window {
        window(range: 0..<Self.clamp(limit), expanded: expanded)
    }

    /// The last `limit` visible items.
    ///
    /// - Complexity: as ``window(range:expanded:)``.
    public func lastPage(limit: Int, expanded: Set<String> = []) -> Window {
        let layout = VisibleLayout(version: self, expanded: expanded)
        return window(
            range: max(0, layout.total - Self.clamp(limit))..<layout.total, layout: layout, expanded: expanded)
    }

    /// The `limit` visible items after the item `id`, or `nil` when it is absent or hidden.
    ///
    /// - Complexity: as ``window(range:expanded:)``.
    public func page(after id: String, limit: Int, expanded: Set<String> = []) -> Window? {
        let layout = VisibleLayout(version: self, expanded: expanded)
        guard let key = interner.lookup(id), let position = layout.position(of: key) else { return nil }
        return window(range: (position + 1)..<(position + 1 + Self.clamp(limit)), layout: layout, expanded: expanded)
    }

    /// The `limit` visible items before the item `id`, or `nil` when it is absent or hidden.
    ///
    /// - Complexity: as ``window(range:expanded:)``.
    public func page(before id: String, limit: Int, expanded: Set<String> = []) -> Window? {
        let layout = VisibleLayout(version: self, expanded: expanded)
        guard let key = interner.lookup(id), let position = layout.position(of: key) else { return nil }
        return window(range: max(0, position - Self.clamp(limit))..<position, layout: layout, expanded: expanded)
    }

    /// `limit` visible items with the item `id` in the middle, or `nil` when it is absent or hidden.
    ///
    /// - Complexity: as ``window(range:expanded:)``.
    public func page(around id: String, limit: Int, expanded: Set<String> = []) -> Window? {
        let layout = VisibleLayout(version: self, expanded: expanded)
        guard let key = interner.lookup(id), let position = layout.position(of: key) else { return nil }
        let limit = max(Self.clamp(limit), 1)
        let end = min(layout.total, max(position - limit / 2, 0) + limit)
        return window(range: max(0, end - limit)..<end, layout: layout, expanded: expanded)
    }

    /// A page size made safe for arithmetic: 0 ... 2³².
    static func clamp(_ limit: Int) -> Int { min(max(limit, 0), 1 << 32) }

    func window(range: Range<Int>, layout: VisibleLayout, expanded: Set<String>) -> Window {
        let (start, end, slices) = sectionSlices(range: range, layout: layout)
        var result: [WindowSection] = []
        result.reserveCapacity(slices.count)
        var maximumKey: Int32 = -1
        for slice in slices {
            let items = visibleItems(of: slice, layout: layout)
            items.withUnsafeBufferPointer { items in
                for index in items.indices where items[index].key > maximumKey { maximumKey = items[index].key }
            }
            result.append(WindowSection(node: slice.node, offset: slice.offset, count: slice.count, items: items))
        }
        return Window(
            version: version, expanded: expanded, start: start, count: end - start, total: layout.total,
            sections: result,
            maximumKey: maximumKey, interner: interner)
    }

    /// The sections that the run of visible positions `range` (clamped) touches, with their slices, before
    /// any item is read. An empty section belongs to the run that starts at or before its place and ends
    /// after it (or ends the list).
    ///
    /// - Complexity: O(log *s* + *t*) for *t* sections touched.
    func sectionSlices(range: Range<Int>, layout: VisibleLayout) -> (start: Int, end: Int, slices: [SectionSlice]) {
        let start = min(max(range.lowerBound, 0), layout.total)
        let end = min(max(range.upperBound, start), layout.total)
        var result: [SectionSlice] = []
        var index = layout.firstSection(endingAfter: start)
        while index < layout.sections.count {
            let section = layout.sections[index]
            index += 1
            if section.start > end || (section.start == end && end < layout.total) { break }
            if section.count == 0 {
                if start <= section.start && (section.start < end || end == layout.total) {
                    result.append(
                        SectionSlice(
                            layoutIndex: index - 1, node: section.node, sectionStart: section.start, offset: 0,
                            count: 0, length: 0))
                }
                continue
            }
            let localStart = max(start - section.start, 0)
            let localEnd = min(end - section.start, section.count)
            guard localStart < localEnd else { continue }
            result.append(
                SectionSlice(
                    layoutIndex: index - 1, node: section.node, sectionStart: section.start, offset: localStart,
                    count: section.count, length: localEnd - localStart))
        }
        return (start, end, result)
    }

    /// The items of a slice.
    ///
    /// - Complexity: O(*k* + *e*·*d* + *d* log *n*) for *k* items.
    func visibleItems(of slice: SectionSlice, layout: VisibleLayout) -> [WindowItem] {
        var items: [WindowItem] = []
        items.reserveCapacity(slice.length)
        var remaining = slice.length
        guard remaining > 0 else { return items }
        emit(
            from: .section(slice.node.key), tree: slice.node.items, skip: slice.offset, parent: nil, depth: 0,
            layout: layout, remaining: &remaining, into: &items)
        return items
    }

    /// The item at visible position `position`, or `nil` past the end.
    ///
    /// - Complexity: O(log *s* + *e*·*d* + *d* log *n*).
    func visibleItem(at position: Int, layout: VisibleLayout) -> WindowItem? {
        guard position >= 0, position < layout.total else { return nil }
        var index = layout.firstSection(endingAfter: position)
        while index < layout.sections.count, layout.sections[index].count == 0 { index += 1 }
        guard index < layout.sections.count else { return nil }
        let section = layout.sections[index]
        let slice = SectionSlice(
            layoutIndex: index, node: section.node, sectionStart: section.start, offset: position - section.start,
            count: section.count, length: 1)
        return visibleItems(of: slice, layout: layout).first
    }

    /// Appends visible items of `container` from visible offset `skip` on, until `remaining` runs out.
    func emit(
        from container: ItemContainer, tree: PersistentTree<OrderLabel, ItemNode>, skip: Int, parent: ItemNode?,
        depth: Int, layout: VisibleLayout, remaining: inout Int, into items: inout [WindowItem]
    ) {
        var accumulated = 0
        var startRank = -1
        var innerSkip: Int?
        for entry in layout.groups[container] ?? [] {
            let blockStart = entry.rank + accumulated
            if skip < blockStart { break }
            if skip < blockStart + 1 + entry.size {
                startRank = entry.rank
                if skip > blockStart { innerSkip = skip - blockStart - 1 }
                break
            }
            accumulated += entry.size
        }
        if startRank < 0 { startRank = skip - accumulated }
        var first = true
        tree.forEach(from: startRank) { _, node in
            if !(first && innerSkip != nil) {
                items.append(WindowItem(node: node, parent: parent, depth: depth))
                remaining -= 1
            }
            if remaining > 0, layout.expandedKeys.contains(node.key) {
                emit(
                    from: .item(node.key), tree: node.children, skip: first ? innerSkip ?? 0 : 0, parent: node,
                    depth: depth + 1, layout: layout, remaining: &remaining, into: &items)
            }
            first = false
            return remaining > 0
        }
    }
}

/// A section's part of a run of visible positions: which section, and which of its visible items.
struct SectionSlice {
    /// Index of the section in the layout.
    let layoutIndex: Int
    let node: SectionNode
    /// Visible position of the section's first item.
    let sectionStart: Int
    /// Index of the slice's first item among the section's visible items.
    let offset: Int
    /// The section's visible item count.
    let count: Int
    /// Items in the slice.
    let length: Int

    /// Visible position of the slice's first item.
    var start: Int { sectionStart + offset }
    /// Visible position just past the slice.
    var end: Int { sectionStart + offset + length }
}
