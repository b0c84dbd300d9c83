/// What one client screen holds of one list (openapi.yaml): the version and the window it last received,
/// the one before (so a retry after a lost answer is answered again), its expanded items and format.
///
/// Small on purpose: a window is kept as its version and visible range, not as its items; the items
/// are cut again from the version (which shares its structure with the current one) when needed.
public struct Session: Sendable {
    public let id: String
    public let list: String
    public let format: ChangeFormat
    /// The `sub` of the token that created the session (`nil` without one): only it may use the session.
    public let subject: String?
    /// Items per page when extending without a `limit`.
    public var limit: Int
    /// The bound on the window (openapi.yaml) and the way the client last scrolled.
    public var bound: WindowBound
    /// The window the client holds now.
    public var current: SessionWindow
    /// The window it held before the last answer, for a retry of that answer.
    public var previous: SessionWindow?
    /// Counts the session's changes, to detect a concurrent update.
    public internal(set) var revision: UInt64 = 0
    /// The answer counter (openapi.yaml): the `seq` of ``current``. 1 for the creation answer, +1 for every
    /// answer that moves the window; never given twice to two different windows.
    public internal(set) var seq: UInt64 = 1
    /// The `seq` of ``previous`` (0 without one): `seq − 1`, or less after a retry answered from it.
    public internal(set) var previousSeq: UInt64 = 0

    public init(
        id: String, list: String, format: ChangeFormat, limit: Int, window: SessionWindow, bound: WindowBound = .none,
        subject: String? = nil
    ) {
        self.id = id
        self.list = list
        self.format = format
        self.subject = subject
        self.limit = limit
        self.bound = bound
        self.current = window
    }

    /// The expanded ids of the current window.
    public var expanded: Set<String> { current.expanded }
}

/// How a request names the window the client holds (openapi.yaml).
public enum SessionPosition: Sendable, Hashable, CustomStringConvertible {
    /// `since=<version>`: the version of the client's window.
    case version(UInt64)
    /// `seq=<n>`: the answer counter of the client's window; tells apart two windows of one version.
    case seq(UInt64)

    public var description: String {
        switch self {
        case .version(let version): "since=\(version)"
        case .seq(let seq): "seq=\(seq)"
        }
    }
}

/// The change encodings a session answers with (openapi.yaml).
public enum ChangeFormat: String, Sendable, CaseIterable {
    /// One structural batch for `performBatchUpdates`, then an in-place pass.
    case batch
    /// One operation at a time, each against the state the previous one left.
    case sequential
}

/// A window as a session keeps it: the version, the visible run and the expanded ids it was cut with,
/// plus what an answer that changes nothing needs (the sections' item counts and the visible total), so
/// that such an answer is written without cutting the window again.
///
/// A class whose every property is a constant, so it has value semantics: a ``Session`` is copied in and out
/// of its store several times per request, and as a struct its two windows would make each copy retain each of
/// the versions' dozen references; as a class a window is one reference.
public final class SessionWindow: Sendable {
    public let version: ListVersion
    public let range: Range<Int>
    public let expanded: Set<String>
    /// Items of each section of the window, in order (the `counts` of an empty batch).
    public let sectionCounts: [Int]
    /// Visible items in the whole version, given ``expanded``.
    public let total: Int

    /// The window `window` cut from `version`.
    public init(_ window: Window, of version: ListVersion) {
        self.version = version
        range = window.start..<window.end
        expanded = window.expanded
        sectionCounts = window.sections.map(\.items.count)
        total = window.total
    }

    /// A window known by its parts (the incremental diff never cuts it).
    init(version: ListVersion, range: Range<Int>, expanded: Set<String>, sectionCounts: [Int], total: Int) {
        self.version = version
        self.range = range
        self.expanded = expanded
        self.sectionCounts = sectionCounts
        self.total = total
    }

    /// The window as the client holds it, with its items.
    ///
    /// - Complexity: as ``ListVersion/window(range:expanded:)``.
    public var window: Window {
        version.window(range: range, expanded: expanded)
    }

    public var hasPrev: Bool { range.lowerBound > 0 }
    public var hasNext: Bool { range.upperBound < total }

    /// The keys, in `latest`'s id table, of the items just before and just after this window in its version,
    /// when they still exist there (see ``ListVersion/window(following:expanded:extend:bound:neighbours:)``).
    ///
    /// - Parameter layout: the layout of this window's version and expanded set, when the caller has it.
    /// - Complexity: O(log *n*) besides the layout of this window's version.
    func neighbours(in latest: ListVersion, layout: VisibleLayout? = nil) -> (before: Int32?, after: Int32?) {
        let layout = layout ?? VisibleLayout(version: version, expanded: expanded)
        func key(at position: Int) -> Int32? {
            guard let item = version.visibleItem(at: position, layout: layout) else { return nil }
            return latest.interner === version.interner ? item.key : latest.interner.lookup(item.node.id)
        }
        return (key(at: range.lowerBound - 1), key(at: range.upperBound))
    }
}
