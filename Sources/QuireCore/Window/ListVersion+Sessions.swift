/// How a session's window grows on a request (openapi.yaml `extend`).
public enum WindowExtension: Sendable, Hashable {
    /// Keep the window's run.
    case none
    /// Append up to this many visible items after the window.
    case next(Int)
    /// Prepend up to this many visible items before the window.
    case previous(Int)
}

/// A bound on a session's window (openapi.yaml): the client holds at most `keep` items (0: no bound). When
/// an extend or the list's own inserts make the window larger, the end farthest from the direction of
/// travel is trimmed: the start after `extend=next`, the end after `extend=prev`; after an update, the
/// end away from the way the client last scrolled (the end, for a client that never scrolled).
public struct WindowBound: Sendable, Hashable {
    /// Items the client holds at most; 0 for no bound.
    public var keep: Int
    /// Whether the client last scrolled towards the list's end (`extend=next`).
    public var travelsForward: Bool
    /// The items an empty window at the list's start takes once the list has some: the session's page size
    /// (0: it stays empty). A session opened on an empty list shows the first items written to it, as a
    /// session opened afterwards would.
    public var fill: Int

    public init(keep: Int = 0, travelsForward: Bool = false, fill: Int = 0) {
        self.keep = max(keep, 0)
        self.travelsForward = travelsForward
        self.fill = max(fill, 0)
    }

    /// No bound.
    public static let none = WindowBound()

    /// The bound after a request that extends the window as `extend` says.
    public func after(_ extend: WindowExtension) -> WindowBound {
        switch extend {
        case .none: self
        case .next: WindowBound(keep: keep, travelsForward: true, fill: fill)
        case .previous: WindowBound(keep: keep, travelsForward: false, fill: fill)
        }
    }

    /// The first and the position past the last of a window's kept survivors (in increasing order: `first`, then
    /// `second` when there is one; `penultimate` when there is one, then `last`), less an end survivor that moved
    /// past the old window's neighbour on its side: openapi.yaml, an item moved far away leaves the window instead
    /// of stretching it. The item that followed the old window (now at `after`) sitting between the last two
    /// survivors, not just before the last one, says the last one left: it was moved away, over the window's
    /// neighbour (a neighbour moved into the window sits before items of it that follow on, and is kept out of
    /// this by being right before the last, or before the penultimate). The first survivor likewise with the
    /// item that preceded the window (`before`). Positions only, so that both diff paths find the same run.
    ///
    /// - Complexity: O(1).
    static func keptEnds(
        first: Int, second: Int?, penultimate: Int?, last: Int, before: Int?, after: Int?
    ) -> (start: Int, end: Int) {
        var (start, end) = (first, last + 1)
        if let after, let penultimate, penultimate < after, last > after + 1 { end = penultimate + 1 }
        if let before, let second, first < before - 1, before < second { start = second }
        return start < end ? (start, end) : (first, last + 1)
    }

    /// The run of visible positions a window takes, given where its surviving items now are.
    ///
    /// - Parameters:
    ///   - kept: the first kept survivor's position and the position just past the last one, or `nil`
    ///     when nothing of the old window survives (it keeps its place and size then; an empty window at the
    ///     list's start takes ``fill`` items).
    ///   - old: the old window's run.
    ///   - total: visible items in the new version.
    ///   - extend: growth asked for.
    /// - Complexity: O(1).
    func range(kept: (start: Int, end: Int)?, old: Range<Int>, total: Int, extend: WindowExtension) -> Range<Int> {
        var start: Int
        var end: Int
        if let kept {
            (start, end) = (kept.start, kept.end)
        } else {
            start = min(old.lowerBound, max(0, total - old.count))
            end = min(total, start + old.count)
        }
        if old.lowerBound == 0 { start = 0 }
        if kept == nil, old.isEmpty, old.lowerBound == 0 { end = min(total, max(end, fill)) }
        let cap = keep > 0 ? keep : Int.max
        switch extend {
        case .none: break
        case .next(let count): end = min(total, end + min(ListVersion.clamp(count), cap))
        case .previous(let count): start = max(0, start - min(ListVersion.clamp(count), cap))
        }
        if keep > 0, end - start > keep {
            let trimsStart: Bool
            switch extend {
            case .next: trimsStart = true
            case .previous: trimsStart = false
            case .none: trimsStart = travelsForward
            }
            if trimsStart { start = end - keep } else { end = start + keep }
        }
        return start..<end
    }
}

extension ListVersion {
    /// The window a session holds in this version, given the window `old` it held in an earlier one
    /// (openapi.yaml): a contiguous run whose ends are the old window's first and last items that still exist
    /// and kept their order (an item moved far away leaves the window instead of stretching it); a window
    /// that started the list still does; when none of its items survives, it keeps its place and size.
    /// Then extended as asked. Diff `old` against it for the changes.
    ///
    /// - Parameters:
    ///   - old: the window the client holds.
    ///   - expanded: the session's expanded ids now (expand and collapse change them).
    ///   - extend: growth asked for with this request.
    ///   - bound: the session's bound on its window, trimmed in the same answer.
    /// - Complexity: O(*k* (*e* + log *n*) + *s*) for an old window of *k* items.
    ///   - neighbours: the keys (in this version's id table) of the items just before and just after `old` in the
    ///     version it was cut from, when they exist (see ``WindowBound/keptEnds(first:second:penultimate:last:before:after:)``).
    public func window(
        following old: Window, expanded: Set<String>, extend: WindowExtension = .none, bound: WindowBound = .none,
        neighbours: (before: Int32?, after: Int32?) = (nil, nil)
    ) -> Window {
        let layout = VisibleLayout(version: self, expanded: expanded)
        var positions: [Int] = []
        positions.reserveCapacity(old.count)
        for section in old.sections {
            for item in section.items {
                if let position = layout.position(of: item.key) { positions.append(position) }
            }
        }
        let kept = longestIncreasingSubsequenceMask(positions)
        let keptPositions = positions.indices.filter { kept[$0] }.map { positions[$0] }
        var survivors: (start: Int, end: Int)?
        if let first = keptPositions.first, let last = keptPositions.last {
            let count = keptPositions.count
            survivors = WindowBound.keptEnds(
                first: first, second: count > 1 ? keptPositions[1] : nil,
                penultimate: count > 1 ? keptPositions[count - 2] : nil, last: last,
                before: neighbours.before.flatMap { layout.position(of: $0) },
                after: neighbours.after.flatMap { layout.position(of: $0) })
        }
        let range = bound.range(kept: survivors, old: old.start..<old.end, total: layout.total, extend: extend)
        return window(range: range, layout: layout, expanded: expanded)
    }
}
