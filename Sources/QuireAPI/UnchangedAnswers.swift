import QuireCore
import QuireHTTP

/// What names a session's "nothing new" answer: the session, its `seq` and its version. A client that
/// asks `changes?since=<current>` and is answered at once (no `wait`) gets the same bytes until its
/// session moves (the answer names only the session, its `seq` and version, and its window's ends), so
/// the answer is built and handed to libmicrohttpd once, as a ``PreparedResponse`` kept in a
/// ``PageCache`` (an ``UnchangedAnswer``) and then queued as it is, as a cached page is. Once the session moves, its key changes:
/// an entry is never sent stale, and the old one ages out as the least recently used.
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

/// A session's "nothing new" answer, and the generation of its list's handle (``ListRegistry/ListHandle``) when
/// the answer was made, if the list was then at the session's version: the answer may be sent without the
/// session's answer being worked out while the list is still there (one atomic load: looking the list's version
/// up by its name cost ~360 instructions a request, callgrind).
final class UnchangedAnswer: Sendable {
    let response: PreparedResponse
    private let list: ListRegistry.ListHandle?
    private let generation: UInt64

    init(_ response: PreparedResponse, list: ListRegistry.ListHandle?, generation: UInt64) {
        self.response = response
        self.list = list
        self.generation = generation
    }

    /// The list has not moved since the answer was made of its version.
    var isCurrent: Bool { list?.currentGeneration == generation }
}
