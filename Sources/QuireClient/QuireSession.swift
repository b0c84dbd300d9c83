import Foundation
import OpenAPIRuntime

/// One update of a session's window: what to apply to the screen, and the window afterwards.
///
/// ``QuireSession/updates`` publishes one per answer, in `seq` order. Apply each to the view (with
/// ``BatchUpdater`` or the UIKit adapter) and make ``window`` the data source's window.
public struct SessionUpdate: Sendable {
    /// What changed since the update before, in the form the view applies.
    public enum Change: Sendable {
        /// One batch for `performBatchUpdates`, then `reconfigureItems` (the `batch` format).
        case changes(BatchChanges)
        /// Operations applied one at a time (the `sequential` format).
        case sequential([SequentialOp])
        /// The whole window is new (`reloadData`): the first page, a reset, a new session after `404`,
        /// or an answer applied to a window before the one shown.
        case reset(ClientWindow)
    }

    /// What to apply to the view.
    public let change: Change
    /// The window after the change.
    public let window: ClientWindow
    /// The answer's `seq` (openapi.yaml): the session's answer counter, 1 for the first page.
    public let seq: Int
    /// Items exist before the window: ``QuireSession/loadPrevious(limit:)`` would bring some.
    public let hasPrev: Bool
    /// Items exist after the window: ``QuireSession/loadNext(limit:)`` would bring some (infinite scrolling).
    public let hasNext: Bool

    /// An update as a session publishes it (tests and previews make their own).
    public init(change: Change, window: ClientWindow, seq: Int, hasPrev: Bool, hasNext: Bool) {
        self.change = change
        self.window = window
        self.seq = seq
        self.hasPrev = hasPrev
        self.hasNext = hasNext
    }
}

/// Why a session call failed (after the SDK's own recoveries).
///
/// The SDK answers `409`, `404 session-not-found`, `429`, `503` and a lost connection itself; what is left reaches the
/// app's call: a `401` after the refreshed token was refused too, a `403` (the token does not cover the list),
/// a `404 list-not-found`, a `400` (`invalid-filter`: the session's ``QuireSession/Options-swift.struct/filter``
/// breaks a limit of the grammar), or a `409` that a reset did not cure. See <doc:RecoveryAndTokens>.
public struct QuireClientError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status, or `0` when no request was answered (the session is not open, or the `.events`
    /// transport was asked of a client that cannot stream).
    public let status: Int
    /// The problem document's type name (`invalid-request`), if any.
    public let problem: String?
    /// `HTTP <status>: <the problem's detail>`, or what went wrong before a request.
    public let description: String
}

/// A live session (openapi.yaml): opens on ``open()``, keeps its window exact, and publishes every change on
/// ``updates``. Answers from the event stream (or long polls) and from the app's own calls are applied in
/// `seq` order, each to the window of its `fromSeq`; `409` resets, `404` opens a new session around the
/// first item the app shows, `429` and `503` wait `Retry-After`, and a lost connection is retried with exponential
/// backoff and jitter. Cancel by ``close()``.
///
/// Made by ``QuireClient/session(list:options:)``. The app's calls (``loadNext(limit:)``, ``expand(id:)``,
/// ``refresh(limit:)``, …) are sent one at a time in the order made, each naming the window the client
/// holds; their answers arrive on ``updates`` like the pushed ones, as a rule before the call returns (an
/// answer that follows one still on its way, such as a pushed event, waits for it).
/// See <doc:ShowAQuireListInACollectionView> and <doc:RecoveryAndTokens>.
public actor QuireSession {
    nonisolated let client: QuireClient
    /// The list's name.
    public nonisolated let list: String
    /// How the session was asked for.
    public nonisolated let options: Options
    /// Every change of the window, in order, starting with the first page (a `.reset`).
    ///
    /// One consumer reads it (the view's); it buffers what is not read yet, and it ends after ``close()``.
    public nonisolated let updates: AsyncStream<SessionUpdate>
    let continuation: AsyncStream<SessionUpdate>.Continuation

    /// The window as the app shows it after the last update.
    public internal(set) var window = ClientWindow()
    /// The `seq` of the last update (openapi.yaml); 0 before the first page.
    public internal(set) var seq = 0
    /// The server's id of the session; `nil` before ``open()`` and while a lost session is being replaced
    /// (it changes then).
    public internal(set) var sessionID: String?
    /// Items exist before the window (as of the last update).
    public internal(set) var hasPrev = false
    /// Items exist after the window (as of the last update).
    public internal(set) var hasNext = false
    /// What the session did, for the app's diagnostics and the tests.
    public internal(set) var statistics = Statistics()

    /// Counters of what a session did: sessions opened, resets, waits, events, retries.
    public struct Statistics: Sendable {
        /// Sessions created (more than one after a `404`).
        public var sessionsOpened = 0
        /// Resets after `409` (or an answer that could not be placed).
        public var resets = 0
        /// Pauses that honoured a `Retry-After`.
        public var retryAfterWaits = 0
        /// Events read from the stream.
        public var events = 0
        /// Long polls sent.
        public var longPolls = 0
        /// Requests sent again after a lost connection (answered from the window before, openapi.yaml).
        public var retries = 0
        /// Answers held until the one they follow arrives (now).
        public var pending = 0
        /// Event streams opened.
        public var streams = 0
    }

    /// The last windows by `seq`, to apply an answer given on the window before (a retry, or an answer of
    /// the app's call that raced an event).
    var windows: [(seq: Int, window: ClientWindow)] = []
    /// Answers whose `fromSeq` has not arrived yet, by `fromSeq`.
    var waiting: [Int: Answer] = [:]
    var pushTask: Task<Void, Never>?
    var visibleItem: String?
    var isClosed = false
    /// The session was lost (`404`, `event: gone`) and its replacement is not open yet: a failed attempt (the
    /// list not loaded yet after a server restart, a lost connection) leaves this set, and the follower and the
    /// app's next call try again.
    var isLost = false
    /// The attempt to open the replacement under way, which every caller that needs it awaits: one new session,
    /// however many requests learned of the loss.
    var reopening: Task<Void, any Error>?
    /// The end of the queue of the app's calls (see ``oneAtATime(_:)``).
    var appCalls: Task<Void, Never>?

    /// How a session is opened (openapi.yaml) and kept up to date.
    public struct Options: Sendable {
        /// The change format (openapi.yaml) the server answers in.
        public enum Format: String, Sendable {
            /// One structural batch, then in-place updates: `performBatchUpdates` (UIKit).
            case batch
            /// Operations applied one at a time (RecyclerView, the web).
            case sequential
        }

        /// How the session learns of writes.
        public enum Transport: Sendable {
            /// The event stream when the client's transport streams response bodies
            /// (``QuireClient/streamsResponses``) and the server has streams; long polls otherwise (the
            /// default `URLSessionTransport` on Linux).
            case automatic
            /// The event stream; ``QuireSession/open()`` throws when the client's transport does not stream.
            case events
            /// Long polls (`GET …/changes?wait=`), one after another.
            case longPolls
        }

        /// Items per page (the first page and every extend); `nil`: the server's default.
        public var limit: Int?
        /// The change format the session's answers are in; `.batch` for UIKit.
        public var format: Format
        /// Open the first page around this item.
        public var around: String?
        /// Items whose children are shown from the first page on.
        public var expanded: [String]
        /// Items held at most (openapi.yaml); `nil`: the server's default.
        public var keep: Int?
        /// Show only the items that match (a filtered session, openapi.yaml); `nil`: the whole list.
        ///
        /// The window, paging, changes and ``SessionUpdate/hasNext`` are those of the filtered list: an item
        /// updated into the filter arrives as an insert, one updated out of it as a delete. A session opened
        /// again after a `404` keeps the filter. To show another filter, close the session and open a new one.
        public var filter: QuireFilter?
        /// How the session learns of writes: the event stream or long polls.
        public var transport: Transport
        /// Seconds a long poll waits.
        public var longPollWait: Int
        /// The longest pause between reconnections, in seconds.
        public var maxBackoff: Double

        /// Options; every one has a default.
        ///
        /// - Parameters:
        ///   - limit: items per page; `nil`: the server's default.
        ///   - format: the change format; `.batch` for UIKit.
        ///   - around: the item the first page is around; `nil`: the list's start.
        ///   - expanded: items whose children are shown.
        ///   - keep: items held at most (a bounded window); `nil`: the server's default.
        ///   - filter: only the items that match, e.g. `.field("data.unread").eq(true)`; `nil`: every item.
        ///   - transport: how the session learns of writes.
        ///   - longPollWait: seconds a long poll waits (the server caps it).
        ///   - maxBackoff: the longest pause between reconnections, in seconds.
        public init(
            limit: Int? = nil, format: Format = .batch, around: String? = nil, expanded: [String] = [],
            keep: Int? = nil, filter: QuireFilter? = nil,
            transport: Transport = .automatic, longPollWait: Int = 25, maxBackoff: Double = 30
        ) {
            self.limit = limit
            self.format = format
            self.around = around
            self.expanded = expanded
            self.keep = keep
            self.filter = filter
            self.transport = transport
            self.longPollWait = longPollWait
            self.maxBackoff = maxBackoff
        }
    }

    init(client: QuireClient, list: String, options: Options) {
        self.client = client
        self.list = list
        self.options = options
        (updates, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Creates the session (its first page arrives on ``updates`` as a `.reset`) and starts following
    /// the list's writes.
    ///
    /// - Throws: ``QuireClientError`` when the server refuses (a `429` or `503` is waited out, not thrown), or when the
    ///   `.events` transport is asked of a client whose transport buffers response bodies (it would wait for a
    ///   stream's end forever); the generated client's `ClientError` when the server cannot be reached (the
    ///   first page is not retried: call `open()` again).
    public func open() async throws {
        if options.transport == .events && !client.streamsResponses {
            throw QuireClientError(
                status: 0, problem: nil,
                description: "the .events transport needs a ClientTransport that streams response bodies "
                    + "(URLSessionTransport buffers them on Linux): use .automatic or .longPolls, or another transport")
        }
        try await create(around: options.around)
        if pushTask == nil {
            pushTask = Task { await self.follow() }
        }
    }

    /// The item the app shows first: after a `404`, the new session opens around it.
    ///
    /// Call it as the view scrolls (the first visible cell's item id). Without one, the new session opens
    /// around the first item of the window, then ``Options-swift.struct/around``.
    public func setVisibleItem(_ id: String?) {
        visibleItem = id
    }

    /// Extends the window with the next page (infinite scrolling). Its items arrive on ``updates`` as inserts,
    /// as a rule before the call returns.
    ///
    /// - Parameter limit: items to add; `nil`: the session's ``Options-swift.struct/limit``.
    /// - Throws: ``QuireClientError`` for what the SDK does not recover from itself (see the type),
    ///   `CancellationError` when the calling task is cancelled, or the transport's error after six
    ///   lost connections in a row.
    public func loadNext(limit: Int? = nil) async throws {
        try await oneAtATime(.extend(.next, limit))
    }

    /// Extends the window with the previous page (scrolling back up a window opened around an item, or trimmed
    /// by ``Options-swift.struct/keep``).
    ///
    /// - Parameter limit: items to add; `nil`: the session's ``Options-swift.struct/limit``.
    /// - Throws: as ``loadNext(limit:)``.
    public func loadPrevious(limit: Int? = nil) async throws {
        try await oneAtATime(.extend(.prev, limit))
    }

    /// Shows an item's children: they arrive as inserts after it, with `parent` and `depth`.
    ///
    /// - Parameter id: the item whose children to show.
    /// - Throws: as ``loadNext(limit:)``.
    public func expand(id: String) async throws {
        try await oneAtATime(.expand(id, true))
    }

    /// Hides an item's children: they arrive as deletes.
    ///
    /// - Parameter id: the item whose children to hide.
    /// - Throws: as ``loadNext(limit:)``.
    public func collapse(id: String) async throws {
        try await oneAtATime(.expand(id, false))
    }

    /// Pull-to-refresh: the first page again, as a `.reset`.
    ///
    /// - Parameter limit: items in the new first page; `nil`: the server's default.
    /// - Throws: as ``loadNext(limit:)``.
    public func refresh(limit: Int? = nil) async throws {
        try await oneAtATime(.reset(limit))
    }

    /// Brings the window up to date now (a request instead of waiting for the push).
    ///
    /// - Throws: as ``loadNext(limit:)``.
    public func sync() async throws {
        try await oneAtATime(.update)
    }
}
