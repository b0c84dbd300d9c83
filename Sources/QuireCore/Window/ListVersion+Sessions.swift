/// How a session's window grows on a request (API.md §4 `extend`).
public enum WindowExtension: Sendable, Hashable {
    /// Keep the window's run.
    case none
    /// Append up to this many visible items after the window.
    case next(Int)
    /// Prepend up to this many visible items before the window.
    case previous(Int)
}

/// A bound on a session's window (API.md §4b): the client holds at most `keep` items (0: no bound). When
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
    /// (API.md §4): a contiguous run whose ends are the old window's first and last items that still exist
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
    public func window(
        following old: Window, expanded: Set<String>, extend: WindowExtension = .none, bound: WindowBound = .none
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
        var survivors: (start: Int, end: Int)?
        if let first = positions.indices.first(where: { kept[$0] }),
            let last = positions.indices.last(where: { kept[$0] })
        {
            survivors = (positions[first], positions[last] + 1)
        }
        let range = bound.range(kept: survivors, old: old.start..<old.end, total: layout.total, extend: extend)
        return window(range: range, layout: layout, expanded: expanded)
    }
}
