import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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
    private let continuation: AsyncStream<SessionUpdate>.Continuation

    /// The window as the app shows it after the last update.
    public private(set) var window = ClientWindow()
    public private(set) var seq = 0
    public private(set) var sessionID: String?
    public private(set) var hasPrev = false
    public private(set) var hasNext = false
    /// What the session did, for the app's diagnostics and the tests.
    public private(set) var statistics = Statistics()

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
    private var windows: [(seq: Int, window: ClientWindow)] = []
    /// Answers whose `fromSeq` has not arrived yet, by `fromSeq`.
    private var waiting: [Int: ClientJSON] = [:]
    private var pushTask: Task<Void, Never>?
    private var visibleItem: String?
    private var isClosed = false

    /// How a session is opened (API.md §4, §4b) and kept up to date.
    public struct Options: Sendable {
        public enum Format: String, Sendable { case batch, sequential }

        /// How the session learns of writes.
        public enum Transport: Sendable {
            /// The event stream; long polls when the server has none.
            case automatic
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
    public func open() async throws {
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
        try await call(.extend("next", limit))
    }

    /// Extends the window with the previous page.
    public func loadPrevious(limit: Int? = nil) async throws {
        try await call(.extend("prev", limit))
    }

    /// Shows an item's children.
    public func expand(id: String) async throws {
        try await call(.expand(id, true))
    }

    /// Hides an item's children.
    public func collapse(id: String) async throws {
        try await call(.expand(id, false))
    }

    /// Pull-to-refresh: the first page again, as a `.reset`.
    public func refresh(limit: Int? = nil) async throws {
        try await call(.reset(limit))
    }

    /// Brings the window up to date now (a request instead of waiting for the push).
    public func sync() async throws {
        try await call(.update)
    }

    /// Stops following, deletes the session, ends ``updates``.
    public func close() async {
        isClosed = true
        pushTask?.cancel()
        pushTask = nil
        if let id = sessionID {
            _ = try? await client.send("DELETE", "/v1/sessions/\(id)")
        }
        continuation.finish()
    }

    // MARK: Requests

    enum Call: Sendable {
        case update
        case extend(String, Int?)
        case expand(String, Bool)
        case reset(Int?)
        case longPoll(Int)
    }

    private func call(_ request: Call) async throws {
        var failures = 0
        while !isClosed {
            guard let id = sessionID else { throw QuireClientError(status: 0, problem: nil, description: "not open") }
            let answer: HTTPAnswer
            do {
                answer = try await send(request, session: id)
            } catch let error as URLError where error.code != .cancelled {
                // Lost on the way: the same request again names the same window, which the server answers
                // from there even if the lost one moved the session (API.md §4a).
                failures += 1
                guard failures <= 6 else { throw error }
                statistics.retries += 1
                try await Task.sleep(for: .seconds(backoff(failures)))
                continue
            }
            guard id == sessionID else { continue }  // a new session meanwhile: ask it instead
            switch answer.status {
            case 200:
                try await apply(answer.json())
                return
            case 409:
                statistics.resets += 1
                if case .reset = request { throw Self.error(answer) }
                try await call(.reset(nil))
                return
            case 404 where answer.problem == "session-not-found":
                try await recover()
                return
            case 503:
                failures += 1
                try await pause(after: answer, failures: failures)
            default:
                throw Self.error(answer)
            }
        }
    }

    /// The HTTP request of `request` on session `id`, from the window the client holds now.
    private func send(_ request: Call, session id: String) async throws -> HTTPAnswer {
        let answer: HTTPAnswer
        switch request {
        case .update, .extend, .longPoll:
            var query = [URLQueryItem(name: "seq", value: "\(seq)")]
            if case .extend(let direction, let limit) = request {
                query.append(URLQueryItem(name: "extend", value: direction))
                if let limit { query.append(URLQueryItem(name: "limit", value: "\(limit)")) }
            }
            if case .longPoll(let wait) = request { query.append(URLQueryItem(name: "wait", value: "\(wait)")) }
            answer = try await client.send("GET", "/v1/sessions/\(id)/changes", query: query)
        case .expand(let item, let expanding):
            answer = try await client.send(
                "POST", "/v1/sessions/\(id)/\(expanding ? "expand" : "collapse")",
                json: .object(["seq": .number(Double(seq)), "id": .string(item)]))
        case .reset(let limit):
            let body: ClientJSON = .object(limit.map { ["limit": .number(Double($0))] } ?? [:])
            answer = try await client.send("POST", "/v1/sessions/\(id)/reset", json: body)
        }
        return answer
    }

    private func create(around: String?) async throws {
        var body: [String: ClientJSON] = ["format": .string(options.format.rawValue)]
        if let limit = options.limit { body["limit"] = .number(Double(limit)) }
        if let keep = options.keep { body["keep"] = .number(Double(keep)) }
        if let around { body["around"] = .string(around) }
        if !options.expanded.isEmpty { body["expanded"] = .array(options.expanded.map(ClientJSON.string)) }
        var failures = 0
        while !isClosed {
            let answer = try await client.send("POST", "/v1/lists/\(list)/sessions", json: .object(body))
            switch answer.status {
            case 201:
                let page = try answer.json()
                guard let id = page["session"]?.stringValue, case .array(let sections)? = page["sections"] else {
                    throw QuireClientError(status: 201, problem: nil, description: "malformed session answer")
                }
                sessionID = id
                statistics.sessionsOpened += 1
                waiting = [:]
                windows = []
                let window = ClientWindow(sections: try sections.map(ClientSection.init(json:)))
                publish(.reset(window), window: window, seq: page.integer("seq") ?? 1, page: page["page"])
                return

            case 503:
                failures += 1
                try await pause(after: answer, failures: failures)
            default:
                throw Self.error(answer)
            }
        }
    }

    /// The session is gone (`404`, `event: gone`): a new one around the first item the app shows (the
    /// server opens the first page when that item is gone too).
    private func recover() async throws {
        let anchor = visibleItem ?? window.itemIDs.first ?? options.around
        sessionID = nil
        try await create(around: anchor)
    }

    // MARK: Applying answers in seq order

    /// Applies an answer (of a call, a long poll or an event) to the window of its `fromSeq`, in `seq`
    /// order: an answer whose base has not arrived yet waits for it; one already passed is dropped (the
    /// window has moved on past it); one that cannot be placed or applied resets the session.
    private func apply(_ answer: ClientJSON) async throws {
        guard answer["session"]?.stringValue == sessionID, let seq = answer.integer("seq") else { return }
        let from = answer.integer("fromSeq") ?? self.seq
        guard seq > self.seq else { return }  // already applied, or superseded
        if let reset = answer["reset"] {
            guard case .array(let sections)? = reset["sections"] else { throw ChangeError("a reset without sections") }
            let window = ClientWindow(sections: try sections.map(ClientSection.init(json:)))
            publish(.reset(window), window: window, seq: seq, page: answer["page"])
            return try await drainWaiting()
        }
        guard let base = windows.last(where: { $0.seq == from })?.window else {
            if from > self.seq {
                waiting[from] = answer  // its base is on its way (the answer of a call, or an event)
                statistics.pending = waiting.count
                return
            }
            return try await resetAfterMisfit()  // a base this client no longer holds
        }
        var next = base
        let change: SessionUpdate.Change
        guard let changes = answer["changes"] else { throw ChangeError("an answer without changes or reset") }
        do {
            switch options.format {
            case .batch:
                let batch = try BatchChanges(json: changes)
                try next.apply(batch)
                change = .changes(batch)
            case .sequential:
                guard case .array(let elements) = changes else {
                    throw ChangeError("sequential changes must be an array")
                }
                let ops = try elements.map(SequentialOp.init(json:))
                try next.apply(ops)
                change = .sequential(ops)
            }
        } catch is ChangeError {
            return try await resetAfterMisfit()
        }
        // Applied to the window the app shows: pass the change on; to the one before: the app reloads.
        publish(from == self.seq ? change : .reset(next), window: next, seq: seq, page: answer["page"])
        try await drainWaiting()
    }

    /// An answer this client cannot apply: start again from a fresh first page.
    private func resetAfterMisfit() async throws {
        statistics.resets += 1
        try await call(.reset(nil))
    }

    private func drainWaiting() async throws {
        waiting = waiting.filter { $0.key >= seq }
        let next = waiting.removeValue(forKey: seq)
        statistics.pending = waiting.count
        if let next { try await apply(next) }
    }

    private func publish(_ change: SessionUpdate.Change, window: ClientWindow, seq: Int, page: ClientJSON?) {
        self.window = window
        self.seq = seq
        if case .bool(let flag)? = page?["hasPrev"] { hasPrev = flag }
        if case .bool(let flag)? = page?["hasNext"] { hasNext = flag }
        windows.append((seq, window))
        if windows.count > 4 { windows.removeFirst(windows.count - 4) }
        continuation.yield(
            SessionUpdate(change: change, window: window, seq: seq, hasPrev: hasPrev, hasNext: hasNext))
    }

    // MARK: Following writes: the event stream, or long polls

    private func follow() async {
        var failures = 0
        var useEvents = options.transport != .longPolls
        while !Task.isCancelled && !isClosed {
            do {
                if useEvents {
                    switch try await readEvents() {
                    case .ended(let received): failures = received ? 0 : failures + 1
                    case .unavailable:
                        if options.transport == .automatic { useEvents = false } else { failures += 1 }
                    case .retry(let answer):
                        failures += 1
                        try await pause(after: answer, failures: failures)
                        continue
                    }
                } else {
                    statistics.longPolls += 1
                    try await call(.longPoll(options.longPollWait))
                    failures = 0
                    continue
                }
            } catch is CancellationError {
                return
            } catch {
                failures += 1
            }
            if failures > 0 {
                try? await Task.sleep(for: .seconds(backoff(failures)))
            }
        }
    }

    enum StreamEnd {
        /// The stream ended; `received`: after at least one event (else it counts as a failure).
        case ended(received: Bool)
        case unavailable
        case retry(HTTPAnswer)
    }

    /// Reads the session's event stream until it ends.
    private func readEvents() async throws -> StreamEnd {
        guard let id = sessionID else { return .ended(received: false) }
        var received = false
        statistics.streams += 1
        var request = URLRequest(url: client.url("/v1/sessions/\(id)/events"))
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue("\(seq)", forHTTPHeaderField: "Last-Event-ID")
        if let token = try await client.tokens.current() {
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 120  // between two pieces: heartbeats come every 15 s
        configuration.timeoutIntervalForResource = 365 * 86_400
        for try await output in EventSourceReader.open(request, configuration: configuration) {
            try Task.checkCancellation()
            switch output {
            case .opened:
                continue
            case .event(let event):
                guard id == sessionID else { return .ended(received: true) }  // a new session: open its stream
                switch event.event {
                case "changes", "reset":
                    statistics.events += 1
                    received = true
                    try await apply(ClientJSON(parsing: Array(event.data.utf8)))
                case "gone":
                    try await recover()
                    return .ended(received: true)
                default: continue
                }
            case .refused(let answer):
                switch answer.status {
                case 401 where client.tokens.canRefresh:
                    try await client.tokens.refresh()
                    return .ended(received: false)
                case 404 where answer.problem == "session-not-found":
                    try await recover()
                    return .ended(received: true)
                case 404, 405, 501: return .unavailable
                case 409:
                    statistics.resets += 1
                    try await call(.reset(nil))
                    return .ended(received: true)
                default: return .retry(answer)
                }
            }
        }
        return .ended(received: received)
    }

    // MARK: Waiting

    /// Waits what `Retry-After` says, else an exponential backoff with jitter.
    private func pause(after answer: HTTPAnswer, failures: Int) async throws {
        if let seconds = answer.retryAfter {
            statistics.retryAfterWaits += 1
            try await Task.sleep(for: .seconds(seconds * Double.random(in: 1...1.2)))
        } else {
            try await Task.sleep(for: .seconds(backoff(failures)))
        }
    }

    /// Full jitter over an exponential bound: 0.2 s, 0.4 s, … up to `maxBackoff`.
    private func backoff(_ failures: Int) -> Double {
        let bound = min(options.maxBackoff, 0.2 * pow(2, Double(min(failures, 16) - 1)))
        return Double.random(in: bound / 2...bound)
    }

    private static func error(_ answer: HTTPAnswer) -> QuireClientError {
        let detail = (try? answer.json())?["detail"]?.stringValue ?? ""
        return QuireClientError(
            status: answer.status, problem: answer.problem, description: "HTTP \(answer.status): \(detail)")
    }
}

extension ClientJSON {
    func integer(_ key: String) -> Int? {
        guard case .number(let number)? = self[key] else { return nil }
        return Int(exactly: number)
    }
}
