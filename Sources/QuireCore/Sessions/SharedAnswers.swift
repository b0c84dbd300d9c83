import Synchronization

/// One answer computed once for every session that holds the same window: many clients sit at the head
/// of the same feed, and a write that wakes them all must cost one answer per *distinct* window, not one
/// per client (openapi.yaml, architecture.md).
///
/// Holds what does not depend on the session: the content (changes or reset), the window afterwards, and
/// the content's encoding (its bytes, and whatever the layer above keeps with them, such as their compressed
/// form), made once by the first caller of ``encoded(_:)``.
public final class SharedAnswer: Sendable {
    public let content: SessionAnswer.Content
    public let window: SessionWindow
    public let isIncremental: Bool
    private let encoding = Mutex<(any Sendable)?>(nil)

    init(content: SessionAnswer.Content, window: SessionWindow, isIncremental: Bool) {
        self.content = content
        self.window = window
        self.isIncremental = isIncremental
    }

    /// The content's encoding, made by `encode` the first time and shared afterwards (callers use one
    /// type of encoding; another type is made anew and replaces the kept one).
    ///
    /// Two first callers may both encode (the result is the same); neither waits for the other.
    public func encoded<Encoding: Sendable>(_ encode: (SessionAnswer.Content) -> Encoding) -> Encoding {
        // Unwrapped before the cast: for an optional `Encoding`, nothing kept (`nil`) cast to it would succeed
        // as a kept `nil`, and no caller would ever encode.
        if let kept = encoding.withLock({ $0 }), let typed = kept as? Encoding { return typed }
        let made = encode(content)
        return encoding.withLock { kept in
            if let earlier = kept, let typed = earlier as? Encoding { return typed }
            kept = made
            return made
        }
    }
}

/// The answers most recently computed, by everything that decides them: the list's lineage, the window
/// the client holds (version, run, expanded items), the version answered against, the request, the
/// session's format and bound. Bounded: past `capacity` entries the oldest half is dropped.
public final class SharedAnswers: Sendable {
    struct Key: Hashable {
        let lineage: ObjectIdentifier
        let baseLineage: ObjectIdentifier
        let base: UInt64
        let range: Range<Int>
        let expanded: Set<String>
        let latest: UInt64
        let change: SessionChange
        let format: ChangeFormat
        let bound: WindowBound
        let resetShare: Double
    }

    private struct Table {
        var entries: [Key: SharedAnswer] = [:]
        var order: [Key] = []
    }

    private let table = Mutex(Table())
    private let hits = Atomic<Int>(0)
    private let capacity: Int

    /// - Parameter capacity: the most answers kept.
    public init(capacity: Int = 4_096) {
        self.capacity = max(capacity, 2)
    }

    /// Answers served from the table since start.
    public var hitCount: Int { hits.load(ordering: .relaxed) }

    func answer(for key: Key, compute: () -> SharedAnswer) -> SharedAnswer {
        if let found = table.withLock({ $0.entries[key] }) {
            hits.add(1, ordering: .relaxed)
            return found
        }
        let made = compute()
        table.withLock { table in
            if table.entries[key] != nil { return }
            if table.order.count >= capacity {
                let dropped = table.order.prefix(capacity / 2)
                for old in dropped { table.entries[old] = nil }
                table.order.removeFirst(dropped.count)
            }
            table.entries[key] = made
            table.order.append(key)
        }
        return made
    }
}
