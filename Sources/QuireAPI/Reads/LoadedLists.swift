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
            let version: ListVersion?
            do {
                version = try registry.loadedVersion(of: name)
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

    /// The problem of a list that does not exist: `404 list-not-found`.
    static func listNotFound(_ name: String) -> Problem {
        Problem(.listNotFound, detail: "No list named \(name).")
    }
}
