import Logging
import QuireCore
import QuireHTTP

/// The lists a route answers from, held in memory or loaded from the store off libmicrohttpd's threads (a page,
/// a session's first window): used by every route that reads a list.
extension APIContext {
    /// The reply of `answer`, made of the list `name` once it is held: a list not held in memory is loaded from
    /// the store off libmicrohttpd's threads (a store slow to answer holds up no other connection), then answered
    /// as one held all along; `404 list-not-found` when it does not exist, `503` when the store cannot be read.
    ///
    /// - Parameter pinned: keep the list pinned from before its load until `answer` returns (it cannot leave
    ///   memory in between: a session is made of it).
    func withLoadedList(
        _ name: String, pinned: Bool = false, _ answer: @escaping @Sendable (ListVersion) -> Response
    ) throws(Problem) -> Reply {
        if let syncing = sourceSyncing(name) { throw syncing }
        // A store that keeps no lists holds none but those in memory.
        guard registry.storeKeepsLists else { throw Self.listNotFound(name) }
        return reads.deferredRead { [self] in
            if pinned { registry.pins.add(name) }
            defer { if pinned { registry.pins.remove(name) } }
            var version: ListVersion?
            do {
                version = try registry.loadedVersion(of: name)
                if version == nil, writes.follower(of: name) != nil { version = try emptySourceList(name) }
            } catch {
                logger.error("loading a list failed", metadata: ["list": "\(name)", "error": "\(error)"])
                return Problem.overloaded(
                    "The list could not be read from the store. Retry shortly.", retryAfterSeconds: 1
                )
                .response
            }
            guard let version else { return Self.listNotFound(name).response }
            return answer(version)
        }
    }

    /// A list a source's template makes but no row is in yet: held empty, at version 0, in memory only (never
    /// stored), so that pages and sessions read it as any list and receive its rows as they arrive (API.md §2b); the
    /// first row makes version 1, which the store creates.
    func emptySourceList(_ name: String) throws -> ListVersion? {
        try registry.holdEmptyIfAbsent(name)
    }

    /// The problem of a list that does not exist: `404 list-not-found`.
    static func listNotFound(_ name: String) -> Problem {
        Problem(.listNotFound, detail: "No list named \(name).")
    }
}
