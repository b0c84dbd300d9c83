import QuireCore
import QuireHTTP
import Synchronization

/// Pages ready to send, by list, version and request: the same page of the same version is assembled
/// (and compressed) once. Stateless pages keep a ``PreparedResponse``; the first windows of new sessions
/// keep a ``FirstWindow`` (the window, and the session-independent part of its body). Entries of old versions are never
/// wrong (the version is in the key), they just age out as the least recently used. Also keeps sessions'
/// "nothing new" answers (``UnchangedAnswerKey``).
final class PageCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let table: Mutex<LRUTable<Key, Value>>
    private let hits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)

    init(capacity: Int) {
        table = Mutex(LRUTable(capacity: max(1, capacity), idleTimeout: .max))
    }

    /// The cached value for `key`, or the one `make` builds (then cached).
    ///
    /// - Complexity: O(1) besides `make`.
    func value(for key: Key, make: () -> Value) -> Value {
        // `make` gives a value: never nil.
        valueIfMade(for: key, make: { make() })!
    }

    /// The cached value for `key`, or the one `make` builds (then cached); `nil`, with nothing cached, when
    /// `make` cannot build it (the key no longer names anything current).
    ///
    /// - Complexity: O(1) besides `make`.
    func valueIfMade(for key: Key, make: () -> Value?) -> Value? {
        if let cached = cachedValue(for: key) { return cached }
        misses.add(1, ordering: .relaxed)
        guard let value = make() else { return nil }
        table.withLock { table in
            if table.use(key, now: 0) == nil { _ = table.insert(key, value, now: 0) }
        }
        return value
    }

    /// The cached value for `key`, if there is one (counted as a hit); nothing is made.
    ///
    /// - Complexity: O(1).
    func cachedValue(for key: Key) -> Value? {
        guard let cached = table.withLock({ $0.use(key, now: 0) }) else { return nil }
        hits.add(1, ordering: .relaxed)
        return cached
    }

    var hitCount: Int { hits.load(ordering: .relaxed) }
    var missCount: Int { misses.load(ordering: .relaxed) }
}

/// What names one cached page: the list, its version (by its stamp: a list deleted and created again numbers
/// its versions anew) and the request's paging (a value, so that looking a page up allocates nothing).
struct PageKey: Hashable {
    let list: String
    let version: ListRegistry.VersionStamp
    let limit: Int
    let after: String?
    let before: String?
}

/// A new session's first window and the page members of its first answer (what is not the session's own),
/// made once for every session opened on the same page of the same version (see
/// `APIContext.sessionFirstWindows`). Immutable: every session opened there shares it.
final class FirstWindow: Sendable {
    let window: SessionWindow
    let page: SharedBody

    init(list: String, _ window: Window, of version: ListVersion) {
        self.window = SessionWindow(window, of: version)
        page = SharedBody(ResponseBodies.sessionPageContent(list: list, window: window))
    }
}
