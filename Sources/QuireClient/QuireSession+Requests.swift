import Foundation
import OpenAPIRuntime

/// The app's calls on a session: each one request of the generated client, sent again after a lost
/// connection (the same request names the same window), with `409` answered by a reset, `404` by a new
/// session and `503` or `429` by a pause of `Retry-After`.
extension QuireSession {
    /// Stops following, deletes the session, ends ``updates``.
    ///
    /// Call it when the screen goes away: the server would otherwise keep the session until it expires. A
    /// closed session cannot be opened again; make a new one with ``QuireClient/session(list:options:)``.
    public func close() async {
        isClosed = true
        // The DELETE ends the session's long poll (`404`) and its stream (`event: gone`) on the server.
        if let id = sessionID { try? await client.deleteSession(id) }
        // swift-corelibs-foundation (Linux) traps when a cancellation races a URLSession task's own end, and
        // URLSessionTransport cancels its task when the calling task is cancelled: with that transport the
        // follower is left to see `isClosed` when its long poll returns (at once, after the DELETE).
        if client.cancelsRequestsSafely { pushTask?.cancel() }
        pushTask = nil
        continuation.finish()
    }

    enum Call: Sendable {
        case update
        case extend(Components.Parameters.Extend, Int?)
        case expand(String, Bool)
        case reset(Int?)
        case longPoll(Int)
    }

    /// The app's calls one at a time, in the order made. Each names the window the client holds (its `seq`):
    /// two at once would name the same one, and the server answers the second from that window (a retry, for
    /// it), so the first one's effect would be undone (a page loaded, then gone).
    func oneAtATime(_ request: Call) async throws {
        try await oneAtATime { try await self.call(request) }
    }

    /// Runs `body` after every request queued before it, and before every request queued after it. The
    /// opening of the event stream is queued too: the stream's first event is computed from the window its
    /// opening names, so an app call answered while it is on its way would be undone.
    func oneAtATime<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let previous = appCalls
        let mine = Task {
            await previous?.value
            return try await body()
        }
        appCalls = Task { _ = try? await mine.value }
        return try await withTaskCancellationHandler {
            try await mine.value
        } onCancel: {
            mine.cancel()
        }
    }

    func call(_ request: Call) async throws {
        var failures = 0
        var raced = 0
        while !isClosed {
            guard let id = sessionID else {
                guard isLost else { throw QuireClientError(status: 0, problem: nil, description: "not open") }
                try await reopen()
                continue
            }
            let reply: Reply<Components.Schemas.ChangesAnswer>
            let sentSeq = seq
            do {
                reply = try await send(request, session: id)
            } catch let error as ClientError where !Task.isCancelled && !(error.underlyingError is CancellationError) {
                // Lost on the way: the same request again names the same window, which the server answers
                // from there even if the lost one moved the session (openapi.yaml).
                failures += 1
                guard failures <= 6 else { throw error }
                statistics.retries += 1
                try await Task.sleep(for: .seconds(backoff(failures)))
                continue
            }
            guard !isClosed else { return }
            guard id == sessionID else { continue }  // a new session meanwhile: ask it instead
            switch reply {
            case .ok(let answer):
                try await apply(Answer(answer))
                return
            case .refused(let refusal) where refusal.status == 409 && seq != sentSeq && raced < 3:
                // The window moved while the request was on its way (an event, an answer): the server no
                // longer holds the window it named. Asked again from the window the client holds now.
                raced += 1
            case .refused(let refusal) where refusal.status == 409:
                statistics.resets += 1
                if case .reset = request { throw refusal.error }
                try await call(.reset(nil))
                return
            case .refused(let refusal) where refusal.status == 404 && refusal.problem == "session-not-found":
                try await recover()
                return
            case .refused(let refusal) where refusal.isRetryLater:
                failures += 1
                try await pause(after: refusal, failures: failures)
            case .refused(let refusal):
                throw refusal.error
            }
        }
    }

    /// The HTTP request of `request` on session `id`, from the window the client holds now.
    private func send(_ request: Call, session id: String) async throws -> Reply<Components.Schemas.ChangesAnswer> {
        switch request {
        case .update:
            return try await client.changes(session: id, .init(seq: seq))
        case .extend(let direction, let limit):
            return try await client.changes(session: id, .init(seq: seq, extend: direction, limit: limit))
        case .longPoll(let wait):
            return try await client.changes(session: id, .init(seq: seq, wait: Double(wait)))
        case .expand(let item, let expanding):
            return try await client.expand(session: id, .init(seq: seq, id: item), expanding: expanding)
        case .reset(let limit):
            return try await client.reset(session: id, .init(limit: limit))
        }
    }

    func create(around: String?) async throws {
        let request = Components.Schemas.SessionCreateRequest(
            limit: options.limit, format: options.format == .batch ? .batch : .sequential, around: around,
            expanded: options.expanded.isEmpty ? nil : options.expanded, keep: options.keep,
            filter: options.filter?.schema)
        var failures = 0
        while !isClosed {
            switch try await client.createSession(list: list, request) {
            case .ok(let page):
                if isClosed {  // closed while it was being opened: nobody would delete it
                    _ = try? await client.deleteSession(page.session)
                    return
                }
                sessionID = page.session
                isLost = false
                statistics.sessionsOpened += 1
                waiting = [:]
                windows = []
                let window = ClientWindow(sections: page.sections.map(ClientSection.init))
                publish(
                    .reset(window), window: window, seq: page.seq, hasPrev: page.page.hasPrev,
                    hasNext: page.page.hasNext)
                return
            case .refused(let refusal) where refusal.isRetryLater:
                failures += 1
                try await pause(after: refusal, failures: failures)
            case .refused(let refusal):
                throw refusal.error
            }
        }
    }

    /// The session is gone (`404`, `event: gone`): a new one around the first item the app shows (the
    /// server opens the first page when that item is gone too).
    func recover() async throws {
        guard !isClosed else { return }
        sessionID = nil
        isLost = true
        try await reopen()
    }

    /// Opens the replacement of a lost session, or awaits the attempt already under way. A failure leaves the
    /// session lost, for the next caller to try again.
    func reopen() async throws {
        if let reopening { return try await reopening.value }
        let attempt = Task {
            try await self.create(around: self.visibleItem ?? self.window.itemIDs.first ?? self.options.around)
        }
        reopening = attempt
        defer { reopening = nil }
        try await attempt.value
    }
}
