import Synchronization

/// The lists something holds on to (a session, and with it its long polls and event stream), counted per list:
/// a pinned list stays in memory whatever the registry's budget (``ListRegistry``), since what holds it keeps
/// its versions alive anyway, and answers from them.
public final class ListPins: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    public init() {}

    /// One more holder of `list`.
    public func add(_ list: String) {
        counts.withLock { $0[list, default: 0] += 1 }
    }

    /// One holder of `list` fewer.
    public func remove(_ list: String) {
        counts.withLock { counts in
            guard let count = counts[list] else { return }
            counts[list] = count > 1 ? count - 1 : nil
        }
    }

    /// Whether anything holds `list`.
    public func isPinned(_ list: String) -> Bool {
        counts.withLock { $0[list] != nil }
    }

    /// The lists held by something.
    public var count: Int { counts.withLock { $0.count } }
}
