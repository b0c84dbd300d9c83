/// What a client asks of its session on top of "bring me up to date" (openapi.yaml).
public enum SessionChange: Sendable, Hashable {
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
        case changes(SessionChanges)
        /// The whole new window, for `reloadData` (boxed, as ``SessionChanges`` is).
        indirect case reset(Window)
        /// Nothing changed: the window is still this one.
        case unchanged(SessionWindow)
    }

    /// The version of the window the answer applies to.
    public let from: UInt64
    /// The `seq` of the window the answer applies to (openapi.yaml).
    public let fromSeq: UInt64
    public let content: Content
    /// The session with its windows moved on.
    public let session: Session
    /// The content and window, when shared with the other sessions that held the same window.
    public var shared: SharedAnswer?
    /// Whether the change log answered (rather than the full window diff): for tests and metrics.
    public var isIncremental: Bool { shared?.isIncremental ?? false }

    /// The window the client holds after applying the answer.
    public var window: SessionWindow { session.current }

    /// The `seq` of the window after the answer: ``fromSeq`` when nothing moved.
    public var seq: UInt64 { session.seq }

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
    /// `since` (or `seq`) names neither the client's window nor the one before; `current` and `seq` are
    /// the session's version and answer counter.
    case sinceMismatch(current: UInt64, seq: UInt64)
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

    /// Whether `position` names the client's current window or the one before (what
    /// ``answer(at:latest:change:resetShare:incremental:cache:)`` accepts).
    public func holds(_ position: SessionPosition) -> Bool {
        switch position {
        case .version(let version):
            current.version.version == version || previous?.version.version == version
        case .seq(let number):
            seq == number || (previous != nil && previousSeq == number)
        }
    }

    /// Answers `change` for a client whose window is at version `since` (see
    /// ``answer(at:latest:change:resetShare:incremental:cache:)``).
    public func answer(
        since: UInt64, latest: ListVersion, change: SessionChange, resetShare: Double, incremental: Bool = true,
        cache: SharedAnswers? = nil
    ) throws(SessionError) -> SessionAnswer {
        try answer(
            at: .version(since), latest: latest, change: change, resetShare: resetShare, incremental: incremental,
            cache: cache)
    }

    /// Answers `change` for a client whose window is at `position`, against the list's `latest` version.
    ///
    /// The client's window is the current one when `position` names it, else the previous one (a retry
    /// after a lost answer; when both have the version `since` names, the current one is taken). The new
    /// window follows the session's bound (`keep`, openapi.yaml); when the changes are larger than
    /// `resetShare` of it, the answer is a reset. An answer that moves the window takes the next `seq`.
    ///
    /// The changes are computed from what the versions in between changed
    /// (``ListVersion/sparseTransition(from:expanded:extend:bound:)``), at a cost that follows the change and not
    /// the window; where that does not apply (see there), from the two windows' items.
    ///
    /// - Parameters:
    ///   - incremental: `false` computes from the windows' items always (the tests' oracle).
    ///   - cache: answers shared between the sessions that hold the same window.
    /// - Throws: ``SessionError/sinceMismatch(current:seq:)``.
    /// - Complexity: O(*c* log *n* + *w*) for *c* changed items and *w* items written, usually; O(*k* log *n*)
    ///   for windows of *k* items in a list of *n* on the full diff.
    public func answer(
        at position: SessionPosition, latest: ListVersion, change: SessionChange, resetShare: Double,
        incremental: Bool = true, cache: SharedAnswers? = nil
    ) throws(SessionError) -> SessionAnswer {
        let base: SessionWindow
        let baseSeq: UInt64
        switch position {
        case .version(let since) where current.version.version == since, .seq(let since) where seq == since:
            (base, baseSeq) = (current, seq)
        case .version(let since) where previous?.version.version == since,
            .seq(let since) where previous != nil && previousSeq == since:
            (base, baseSeq) = (previous!, previousSeq)
        default:
            throw .sinceMismatch(current: current.version.version, seq: seq)
        }
        let baseIsCurrent = baseSeq == seq
        let since = base.version.version
        if change == .update && base.version.version == latest.version && baseIsCurrent {
            // The list has not changed since the client's window: nothing to compute. (QuireAPI answers this case
            // before calling here when it prepared the answer before: `APIContext.unchangedAnswer`. Keep them alike.)
            return SessionAnswer(from: since, fromSeq: seq, content: .unchanged(current), session: self)
        }
        var expanded = base.expanded
        var extend = WindowExtension.none
        switch change {
        case .update: break
        case .extendNext(let count): extend = .next(count)
        case .extendPrevious(let count): extend = .previous(count)
        case .expand(let id): expanded.insert(id)
        case .collapse(let id): expanded.remove(id)
        }
        var bound = bound.after(extend)
        bound.fill = limit
        let compute = {
            Self.compute(
                base: base, latest: latest, expanded: expanded, extend: extend, bound: bound, resetShare: resetShare,
                incremental: incremental)
        }
        let shared: SharedAnswer
        if let cache {
            let key = SharedAnswers.Key(
                lineage: latest.lineageIdentity, baseLineage: base.version.lineageIdentity,
                base: base.version.version, range: base.range,
                expanded: base.expanded, latest: latest.version, change: change, format: format, bound: bound,
                resetShare: resetShare)
            shared = cache.answer(for: key, compute: compute)
        } else {
            shared = compute()
        }
        var answer: SessionAnswer
        if base.version.version == latest.version && base.range == shared.window.range
            && base.expanded == expanded && baseIsCurrent
        {
            // Nothing moved: the session stays as it is (and keeps its previous window for a retry).
            answer = SessionAnswer(from: since, fromSeq: seq, content: shared.content, session: self)
        } else {
            var next = self
            next.previous = base
            next.previousSeq = baseSeq
            next.current = shared.window
            next.bound = bound
            next.revision &+= 1
            next.seq = seq + 1
            answer = SessionAnswer(from: since, fromSeq: baseSeq, content: shared.content, session: next)
        }
        answer.shared = shared
        return answer
    }

    /// The content and the window of an answer: from the change log when it can, else from the windows.
    private static func compute(
        base: SessionWindow, latest: ListVersion, expanded: Set<String>, extend: WindowExtension, bound: WindowBound,
        resetShare: Double, incremental: Bool
    ) -> SharedAnswer {
        if incremental,
            let sparse = latest.sparseTransition(from: base, expanded: expanded, extend: extend, bound: bound)
        {
            let changes = SessionChanges.sparse(sparse.changes)
            guard changes.exceeds(share: resetShare) && !changes.isEmpty else {
                return SharedAnswer(content: .changes(changes), window: sparse.window, isIncremental: true)
            }
            let reset = latest.window(range: sparse.window.range, expanded: expanded)
            return SharedAnswer(content: .reset(reset), window: sparse.window, isIncremental: true)
        }
        // A window of an earlier id table (the list's table was compacted since) is matched by id.
        let old = base.window.rekeyed(to: latest.interner)
        let new = latest.window(
            following: old, expanded: expanded, extend: extend, bound: bound, neighbours: base.neighbours(in: latest))
        let changes = SessionChanges.full(old.changes(to: new))
        let isReset = changes.exceeds(share: resetShare) && !changes.isEmpty
        return SharedAnswer(
            content: isReset ? .reset(new) : .changes(changes), window: SessionWindow(new, of: latest),
            isIncremental: false)
    }

    /// Starts over at the first page of `latest` (pull-to-refresh): the answer is a reset.
    ///
    /// - Complexity: as ``ListVersion/firstPage(limit:expanded:)``.
    public func reset(latest: ListVersion, limit: Int) -> SessionAnswer {
        let window = latest.firstPage(limit: limit, expanded: current.expanded)
        var next = self
        next.limit = limit
        next.previous = current
        next.previousSeq = seq
        next.current = SessionWindow(window, of: latest)
        next.revision &+= 1
        next.seq = seq + 1
        return SessionAnswer(from: current.version.version, fromSeq: seq, content: .reset(window), session: next)
    }
}

/// The changes of a session answer: from the full window diff, or from the change log.
///
/// Indirect: the changes live in one box, made once with the answer (often shared by many sessions), and a copy
/// of an answer retains that box instead of each of the changes' arrays: a session answer is copied on its way to
/// the wire, and each copy would otherwise retain and release every one of those arrays.
public indirect enum SessionChanges: Sendable {
    case full(WindowChanges)
    case sparse(SparseChanges)

    /// Whether nothing changed.
    public var isEmpty: Bool {
        switch self {
        case .full(let changes): changes.isEmpty
        case .sparse(let changes): changes.isEmpty
        }
    }

    /// Operations in the change (see ``WindowChanges/operationCount``).
    public var operationCount: Int {
        switch self {
        case .full(let changes): changes.operationCount
        case .sparse(let changes): changes.operationCount
        }
    }

    /// Whether the change is larger than `share` of the new window (see ``WindowChanges/exceeds(share:)``).
    public func exceeds(share: Double) -> Bool {
        switch self {
        case .full(let changes): changes.exceeds(share: share)
        case .sparse(let changes): changes.exceeds(share: share)
        }
    }

    /// Appends the `batch` object of openapi.yaml.
    public func encodeBatch(into out: inout [UInt8]) {
        switch self {
        case .full(let changes): changes.encodeBatch(into: &out)
        case .sparse(let changes): changes.encodeBatch(into: &out)
        }
    }

    /// Appends the `sequential` array of openapi.yaml.
    public func encodeSequential(into out: inout [UInt8]) {
        switch self {
        case .full(let changes): changes.encodeSequential(into: &out)
        case .sparse(let changes): changes.encodeSequential(into: &out)
        }
    }

    /// Whether the incremental diff computed the changes.
    public var isIncremental: Bool {
        if case .sparse = self { return true }
        return false
    }
}
