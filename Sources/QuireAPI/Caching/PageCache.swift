import QuireCore
import QuireHTTP
import Synchronization

/// Pages ready to send: the same page of the same version is assembled (and compressed) once. Stateless pages
/// keep a ``ListResponse`` by request (``PageQuery``), replaced once their list moves on; the first windows of new
/// sessions keep a ``FirstWindow`` (the window, and the session-independent part of its body) by version
/// (``FirstWindowKey``), whose old entries are never wrong and age out as the least recently used. Also keeps
/// sessions' "nothing new" answers (``UnchangedAnswerKey``).
final class PageCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let table: Mutex<LRUTable<Key, Value>>
    private let hits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)

    init(capacity: Int) {
        table = Mutex(LRUTable(capacity: max(1, capacity), idleTimeout: .max))
    }

    /// The cached value for `key`, or the one `make` builds (then cached): for values that never go stale
    /// under their key.
    ///
    /// - Complexity: O(1) besides `make`.
    func value(for key: Key, make: () -> Value) -> Value {
        // `make` gives a value: never nil.
        value(for: key, ifCurrent: { _ in true }, make: { make() })!
    }

    /// The cached value for `key` if `isCurrent` accepts it, or the one `make` builds, cached in its place;
    /// `nil`, with nothing cached, when `make` cannot build it. For values made from what may change under the
    /// same key (a page of a list's current version): the stale one is replaced, never kept beside it.
    ///
    /// - Complexity: O(1) besides `isCurrent` and `make`.
    func value(for key: Key, ifCurrent isCurrent: (Value) -> Bool, make: () -> Value?) -> Value? {
        if let cached = table.withLock({ $0.use(key, now: 0) }), isCurrent(cached) {
            hits.add(1, ordering: .relaxed)
            return cached
        }
        misses.add(1, ordering: .relaxed)
        guard let value = make() else { return nil }
        table.withLock { table in
            if table.modify(key, now: 0, { $0 = value }) == nil { _ = table.insert(key, value, now: 0) }
        }
        return value
    }

    /// The cached value for `key` if there is one and `isCurrent` accepts it (counted as a hit); nothing is made,
    /// and nothing is counted without one (the caller goes on to ``value(for:ifCurrent:make:)``, which counts).
    ///
    /// - Complexity: O(1) besides `isCurrent`.
    func currentValue(for key: Key, ifCurrent isCurrent: (Value) -> Bool) -> Value? {
        guard let cached = table.withLock({ $0.use(key, now: 0) }), isCurrent(cached) else { return nil }
        hits.add(1, ordering: .relaxed)
        return cached
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

/// What names a page of a list's current version: the list and the request's paging (a value, so that looking
/// a page up allocates nothing). The version is the cached page's (``ListResponse``): one page per request is
/// kept, replaced when the list moves on.
struct PageQuery: Hashable {
    let list: String
    let limit: Int
    let after: String?
    let before: String?

    /// One word to the hasher, made of every field (FNV-1a over the strings' bytes): the synthesized hash gave the
    /// seeded hasher each string and optional on its own, a noticeable cost on every page. Equal queries
    /// have equal words; the keys a cache holds are pages it made (a list that exists, a cursor it issued), not
    /// texts a client chooses, and the seeded hasher still mixes the word.
    func hash(into hasher: inout Hasher) {
        var word = Self.fold(list, into: 0xcbf2_9ce4_8422_2325 ^ UInt64(truncatingIfNeeded: limit))
        if let after { word = Self.fold(after, into: word ^ 0x61) }
        if let before { word = Self.fold(before, into: word ^ 0x62) }
        hasher.combine(word)
    }

    private static func fold(_ text: String, into word: UInt64) -> UInt64 {
        var text = text
        return text.withUTF8 { bytes in
            var word = word
            for byte in bytes { word = (word ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return word
        }
    }
}

/// A prepared response made of a list's version, with that version's generation of the list's handle: current
/// while the handle is at the same generation, which costs one atomic load (looking the list's version up by its
/// name would cost a lookup of the registry on every request). A stateless page, and a session's "nothing new" answer
/// (without a generation when the list had already moved on when it was made: never current).
final class ListResponse: Sendable {
    let response: PreparedResponse
    /// The list's handle and the generation of the version the response was made of; `nil`: never current.
    private let madeOf: (list: ListRegistry.ListHandle, generation: UInt64)?

    init(_ response: PreparedResponse, madeOf: (list: ListRegistry.ListHandle, generation: UInt64)?) {
        self.response = response
        self.madeOf = madeOf
    }

    /// The list has not moved on since the response was made of its version (nor left memory); counts as a use
    /// of the list (``ListRegistry/ListHandle/isCurrent(_:)``).
    var isCurrent: Bool { madeOf.map { $0.list.isCurrent($0.generation) } ?? false }
}

/// What names a session's first window at a list's head: the generation of the list's version it is cut from
/// (``ListRegistry/ListHandle``: numbered process-wide, so it names the list too) and the window's size.
struct FirstWindowKey: Hashable {
    let generation: UInt64
    let limit: Int
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
