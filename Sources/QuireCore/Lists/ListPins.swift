import Synchronization

/// The lists something holds on to (a session, and with it its long polls and event stream), counted per list:
/// a pinned list stays in memory whatever the registry's budget (``ListRegistry``), since what holds it keeps
/// its versions alive anyway, and answers from them. A view's name (``ViewName``) pins the view and its list.
public final class ListPins: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    public init() {}

    /// One more holder of `list` (a list's or a view's name).
    public func add(_ list: String) {
        let viewed = ViewName.split(list)?.list
        counts.withLock { counts in
            counts[list, default: 0] += 1
            if let viewed { counts[viewed, default: 0] += 1 }
        }
    }

    /// One holder of `list` fewer.
    public func remove(_ list: String) {
        let viewed = ViewName.split(list)?.list
        counts.withLock { counts in
            Self.decrement(list, in: &counts)
            if let viewed { Self.decrement(viewed, in: &counts) }
        }
    }

    private static func decrement(_ name: String, in counts: inout [String: Int]) {
        guard let count = counts[name] else { return }
        counts[name] = count > 1 ? count - 1 : nil
    }

    /// Whether anything holds `list`.
    public func isPinned(_ list: String) -> Bool {
        counts.withLock { $0[list] != nil }
    }

    /// The lists held by something.
    public var count: Int { counts.withLock { $0.count } }
}
