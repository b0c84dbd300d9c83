/// What a client asks of its session on top of "bring me up to date" (API.md §4).
public enum SessionChange: Sendable, Equatable {
    /// Just the changes since the client's version.
    case update
    /// The changes, plus `limit` more items after the window.
    case extendNext(Int)
    /// The changes, plus `limit` more items before the window.
    case extendPrevious(Int)
    /// Show the children of an item.
    case expand(String)
    /// Hide the children of an item.
    case collapse(String)
}

/// A session's answer to one request: the changes, a reset or nothing, and the session afterwards.
public struct SessionAnswer: Sendable {
    /// What the client applies.
    public enum Content: Sendable {
        /// The changes from the client's window to the new one.
        case changes(WindowChanges)
        /// The whole new window, for `reloadData`.
        case reset(Window)
        /// Nothing changed: the window is still this one.
        case unchanged(SessionWindow)
    }

    /// The version of the window the answer applies to.
    public let from: UInt64
    public let content: Content
    /// The session with its windows moved on.
    public let session: Session

    /// The window the client holds after applying the answer.
    public var window: SessionWindow { session.current }

    /// Whether the answer changes nothing (a long poll keeps waiting then).
    public var isEmpty: Bool {
        switch content {
        case .changes(let changes): changes.isEmpty
        case .reset: false
        case .unchanged: true
        }
    }
}

/// Why a session cannot answer.
public enum SessionError: Error, Sendable, Equatable {
    /// `since` is neither the version of the client's window nor the one before; `current` is the
    /// session's.
    case sinceMismatch(current: UInt64)
}

extension Session {
    /// The window a new session starts with: the first page, or the page around an item.
    ///
    /// - Complexity: as ``ListVersion/window(range:expanded:)``.
    public static func initialWindow(of version: ListVersion, limit: Int, around: String?, expanded: Set<String>)
        -> Window
    {
        if let around, let window = version.page(around: around, limit: limit, expanded: expanded) {
            return window
        }
        return version.firstPage(limit: limit, expanded: expanded)
    }

    /// Answers `change` for a client whose window is at `since`, against the list's `latest` version.
    ///
    /// The client's window is the current one when `since` is its version, else the previous one
    /// (a retry after a lost answer; when both have that version, the current one is taken). The new
    /// window follows API.md §4; when the changes are larger than `resetShare` of it, the answer is a
    /// reset.
    ///
    /// - Throws: ``SessionError/sinceMismatch(current:)``.
    /// - Complexity: O(*k* log *n*) for windows of *k* items in a list of *n*.
    public func answer(since: UInt64, latest: ListVersion, change: SessionChange, resetShare: Double)
        throws(SessionError) -> SessionAnswer
    {
        let base: SessionWindow
        if current.version.version == since {
            base = current
        } else if let previous, previous.version.version == since {
            base = previous
        } else {
            throw .sinceMismatch(current: current.version.version)
        }
        if change == .update && base.version.version == latest.version && current.version.version == since {
            // The list has not changed since the client's window: nothing to compute.
            return SessionAnswer(from: since, content: .unchanged(current), session: self)
        }
        let old = base.window
        var expanded = base.expanded
        var extend = WindowExtension.none
        switch change {
        case .update: break
        case .extendNext(let count): extend = .next(count)
        case .extendPrevious(let count): extend = .previous(count)
        case .expand(let id): expanded.insert(id)
        case .collapse(let id): expanded.remove(id)
        }
        let new = latest.window(following: old, expanded: expanded, extend: extend)
        let changes = old.changes(to: new)
        if base.version.version == latest.version && base.range == new.start..<new.end && base.expanded == expanded
            && current.version.version == since
        {
            // Nothing moved: the session stays as it is (and keeps its previous window for a retry).
            return SessionAnswer(from: since, content: .changes(changes), session: self)
        }
        var next = self
        next.previous = base
        next.current = SessionWindow(new, of: latest)
        next.revision &+= 1
        let isReset = changes.exceeds(share: resetShare) && !changes.isEmpty
        return SessionAnswer(from: since, content: isReset ? .reset(new) : .changes(changes), session: next)
    }

    /// Starts over at the first page of `latest` (pull-to-refresh): the answer is a reset.
    ///
    /// - Complexity: as ``ListVersion/firstPage(limit:expanded:)``.
    public func reset(latest: ListVersion, limit: Int) -> SessionAnswer {
        let window = latest.firstPage(limit: limit, expanded: current.expanded)
        var next = self
        next.limit = limit
        next.previous = current
        next.current = SessionWindow(window, of: latest)
        next.revision &+= 1
        return SessionAnswer(from: current.version.version, content: .reset(window), session: next)
    }
}
