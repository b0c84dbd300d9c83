import QuireCore
import QuireHTTP
import Synchronization

/// "Nothing new" answers ready to send, by session. A client that asks `changes?since=<current>` and is
/// answered at once (no `wait`, or a wait that ends with nothing) gets the same bytes until its session
/// moves: the answer names only the session, its `seq` and version, and its window's ends. So it is built
/// and handed to libmicrohttpd once, as a ``PreparedResponse``, and then queued as it is by every request
/// that gets it, as a cached page is (no body, no response, no header fields per request).
///
/// An entry records the `seq` and version it was built at: once the session moves, the entry no longer
/// matches and the next unchanged answer replaces it, so an entry is never sent stale. Entries of sessions
/// that stopped asking age out as the least recently used; a session that is deleted leaves its entry
/// to age out the same way (its id is never given again).
final class UnchangedAnswers: Sendable {
    private struct Entry: Sendable {
        let seq: UInt64
        let version: UInt64
        let response: PreparedResponse
    }

    private let table: Mutex<LRUTable<String, Entry>>

    /// - Parameter capacity: sessions whose answer is kept (each about 1 KB: the body and the
    ///   libmicrohttpd response made from it).
    init(capacity: Int) {
        table = Mutex(LRUTable(capacity: max(1, capacity), idleTimeout: .max))
    }

    /// The prepared response of `reply`, or `nil` when `reply` is not a "nothing new" answer from the
    /// session's current window (those differ from one request to the next, or are sent once).
    ///
    /// - Complexity: O(1), besides building the answer on a miss.
    func response(for reply: SessionReply) -> PreparedResponse? {
        let answer = reply.answer
        guard case .unchanged = answer.content, answer.fromSeq == answer.seq else { return nil }
        let id = answer.session.id
        let (seq, version) = (answer.seq, reply.version)
        if let entry = table.withLock({ $0.use(id, now: 0) }), entry.seq == seq, entry.version == version {
            return entry.response
        }
        let made = PreparedResponse(reply.response)
        let entry = Entry(seq: seq, version: version, response: made)
        let evicted = table.withLock { table -> LRUTable<String, Entry>.Removed? in
            guard let kept = table.use(id, now: 0) else { return table.insert(id, entry, now: 0) }
            // Keep the newer of two racing entries: a session's seq and version only grow.
            if kept.seq <= seq && kept.version <= version { _ = table.update(id, to: entry, now: 0) }
            return nil
        }
        _ = evicted  // released here, outside the lock (a response's deinit frees libmicrohttpd's)
        return made
    }
}
