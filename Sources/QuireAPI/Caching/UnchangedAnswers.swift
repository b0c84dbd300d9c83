import QuireCore
import QuireHTTP

/// What names a session's "nothing new" answer: the session, its `seq` and its version. A client that
/// asks `changes?since=<current>` and is answered at once (no `wait`) gets the same bytes until its
/// session moves (the answer names only the session, its `seq` and version, and its window's ends), so
/// the answer is built and handed to libmicrohttpd once, as a ``PreparedResponse`` kept in a
/// ``PageCache`` (with its list's generation, ``ListResponse``) and then queued as it is, as a cached page is.
/// Once the session moves, its key changes: an entry is never sent stale, and the old one ages out as the least
/// recently used.
struct UnchangedAnswerKey: Hashable, Sendable {
    let session: SessionKey
    let seq: UInt64
    let version: UInt64

    init(session: SessionKey, seq: UInt64, version: UInt64) {
        (self.session, self.seq, self.version) = (session, seq, version)
    }

    /// The key of `reply`, or `nil` when `reply` is not a "nothing new" answer from the session's current
    /// window (those differ from one request to the next, or are sent once).
    init?(_ reply: SessionReply) {
        let answer = reply.answer
        guard case .unchanged = answer.content, answer.fromSeq == answer.seq else { return nil }
        (session, seq, version) = (SessionKey(answer.session.id), answer.seq, reply.version)
    }
}
