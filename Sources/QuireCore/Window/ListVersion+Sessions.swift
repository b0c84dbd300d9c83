/// How a session's window grows on a request (API.md §4 `extend`).
public enum WindowExtension: Sendable, Hashable {
    /// Keep the window's run.
    case none
    /// Append up to this many visible items after the window.
    case next(Int)
    /// Prepend up to this many visible items before the window.
    case previous(Int)
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
    /// - Complexity: O(*k* (*e* + log *n*) + *s*) for an old window of *k* items.
    public func window(following old: Window, expanded: Set<String>, extend: WindowExtension = .none) -> Window {
        let layout = VisibleLayout(version: self, expanded: expanded)
        var positions: [Int] = []
        positions.reserveCapacity(old.count)
        for section in old.sections {
            for item in section.items {
                if let position = layout.position(of: item.key) { positions.append(position) }
            }
        }
        var start: Int
        var end: Int
        let kept = longestIncreasingSubsequenceMask(positions)
        if let first = positions.indices.first(where: { kept[$0] }),
            let last = positions.indices.last(where: { kept[$0] })
        {
            start = positions[first]
            end = positions[last] + 1
        } else {
            // Nothing of the old window survives: keep its place and its size.
            start = min(old.start, max(0, layout.total - old.count))
            end = min(layout.total, start + old.count)
        }
        if old.start == 0 { start = 0 }
        switch extend {
        case .none: break
        case .next(let count): end = min(layout.total, end + Self.clamp(count))
        case .previous(let count): start = max(0, start - Self.clamp(count))
        }
        return window(range: start..<end, layout: layout, expanded: expanded)
    }
}
