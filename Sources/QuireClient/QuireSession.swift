import Foundation
import OpenAPIRuntime

/// One update of a session's window: what to apply to the screen, and the window afterwards.
public struct SessionUpdate: Sendable {
    public enum Change: Sendable {
        /// One batch for `performBatchUpdates`, then `reconfigureItems` (the `batch` format).
        case changes(BatchChanges)
        /// Operations applied one at a time (the `sequential` format).
        case sequential([SequentialOp])
        /// The whole window is new (`reloadData`): the first page, a reset, a new session after `404`,
        /// or an answer applied to a window before the one shown.
        case reset(ClientWindow)
    }

    public let change: Change
    /// The window after the change.
    public let window: ClientWindow
    /// The answer's `seq`.
    public let seq: Int
    public let hasPrev: Bool
    public let hasNext: Bool

    public init(change: Change, window: ClientWindow, seq: Int, hasPrev: Bool, hasNext: Bool) {
        self.change = change
        self.window = window
        self.seq = seq
        self.hasPrev = hasPrev
        self.hasNext = hasNext
    }
}

/// Why a session call failed (after the SDK's own recoveries).
public struct QuireClientError: Error, Sendable, CustomStringConvertible {
    public let status: Int
    /// The problem document's type name (`invalid-request`), if any.
    public let problem: String?
    public let description: String
}

/// A live session (API.md §4): opens on ``open()``, keeps its window exact, and publishes every change on
/// ``updates``. Answers from the event stream (or long polls) and from the app's own calls are applied in
/// `seq` order, each to the window of its `fromSeq`; `409` resets, `404` opens a new session around the
/// first item the app shows, `503` waits `Retry-After`, and a lost connection is retried with exponential
/// backoff and jitter. Cancel by ``close()``.
public actor QuireSession {
    nonisolated let client: QuireClient
    public nonisolated let list: String
    public nonisolated let options: Options
    /// Every change of the window, in order, starting with the first page (a `.reset`).
    public nonisolated let updates: AsyncStream<SessionUpdate>
    let continuation: AsyncStream<SessionUpdate>.Continuation

    /// The window as the app shows it after the last update.
    public internal(set) var window = ClientWindow()
    public internal(set) var seq = 0
    public internal(set) var sessionID: String?
    public internal(set) var hasPrev = false
    public internal(set) var hasNext = false
    /// What the session did, for the app's diagnostics and the tests.
    public internal(set) var statistics = Statistics()

    public struct Statistics: Sendable {
        /// Sessions created (more than one after a `404`).
        public var sessionsOpened = 0
        /// Resets after `409` (or an answer that could not be placed).
        public var resets = 0
        /// Pauses that honoured a `Retry-After`.
        public var retryAfterWaits = 0
        /// Events read from the stream, answers read from long polls.
        public var events = 0
        public var longPolls = 0
        /// Requests sent again after a lost connection (answered from the window before, API.md §4a).
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

    /// How a session is opened (API.md §4, §4b) and kept up to date.
    public struct Options: Sendable {
        public enum Format: String, Sendable { case batch, sequential }

        /// How the session learns of writes.
        public enum Transport: Sendable {
            /// The event stream when the client's transport streams response bodies
            /// (``QuireClient/streamsResponses``) and the server has streams; long polls otherwise (the
            /// default `URLSessionTransport` on Linux).
            case automatic
            /// The event stream; ``QuireSession/open()`` throws when the client's transport does not stream.
            case events
            case longPolls
        }

        /// Items per page (the first page and every extend); `nil`: the server's default.
        public var limit: Int?
        public var format: Format
        /// Open the first page around this item.
        public var around: String?
        public var expanded: [String]
        /// Items held at most (API.md §4b); `nil`: the server's default.
        public var keep: Int?
        public var transport: Transport
        /// Seconds a long poll waits.
        public var longPollWait: Int
        /// The longest pause between reconnections, in seconds.
        public var maxBackoff: Double

        public init(
            limit: Int? = nil, format: Format = .batch, around: String? = nil, expanded: [String] = [],
            keep: Int? = nil,
            transport: Transport = .automatic, longPollWait: Int = 25, maxBackoff: Double = 30
        ) {
            self.limit = limit
            self.format = format
            self.around = around
            self.expanded = expanded
            self.keep = keep
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
    /// - Throws: ``QuireClientError`` when the server refuses, or when the `.events` transport is asked of
    ///   a client whose transport buffers response bodies (it would wait for a stream's end forever).
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
    public func setVisibleItem(_ id: String?) {
        visibleItem = id
    }

    /// Extends the window with the next page (infinite scrolling).
    public func loadNext(limit: Int? = nil) async throws {
        try await oneAtATime(.extend(.next, limit))
    }

    /// Extends the window with the previous page.
    public func loadPrevious(limit: Int? = nil) async throws {
        try await oneAtATime(.extend(.prev, limit))
    }

    /// Shows an item's children.
    public func expand(id: String) async throws {
        try await oneAtATime(.expand(id, true))
    }

    /// Hides an item's children.
    public func collapse(id: String) async throws {
        try await oneAtATime(.expand(id, false))
    }

    /// Pull-to-refresh: the first page again, as a `.reset`.
    public func refresh(limit: Int? = nil) async throws {
        try await oneAtATime(.reset(limit))
    }

    /// Brings the window up to date now (a request instead of waiting for the push).
    public func sync() async throws {
        try await oneAtATime(.update)
    }
}
