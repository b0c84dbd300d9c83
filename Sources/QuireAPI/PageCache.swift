import QuireCore
import QuireHTTP
import Synchronization

/// Stateless pages ready to send, by list, version and request: the same page of the same version is
/// assembled once. Entries of old versions are never wrong (the version is in the key), they just age
/// out as the least recently used.
final class PageCache: Sendable {
    private let table: Mutex<LRUTable<PageKey, PreparedResponse>>
    private let hits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)

    init(capacity: Int) {
        table = Mutex(LRUTable(capacity: max(1, capacity), idleTimeout: .max))
    }

    /// The cached response for `key`, or the one `make` builds (then cached).
    func response(for key: PageKey, make: () -> PreparedResponse) -> PreparedResponse {
        if let cached = table.withLock({ $0.use(key, now: 0) }) {
            hits.add(1, ordering: .relaxed)
            return cached
        }
        misses.add(1, ordering: .relaxed)
        let response = make()
        table.withLock { table in
            if table.use(key, now: 0) == nil { _ = table.insert(key, response, now: 0) }
        }
        return response
    }

    var hitCount: Int { hits.load(ordering: .relaxed) }
    var missCount: Int { misses.load(ordering: .relaxed) }
}

/// What names one cached page: the list, its version and the request's paging (a value, so that looking a
/// page up allocates nothing).
struct PageKey: Hashable {
    let list: String
    let version: UInt64
    let limit: Int
    let after: String?
    let before: String?
}
