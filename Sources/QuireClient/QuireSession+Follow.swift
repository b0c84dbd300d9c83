import Foundation
import OpenAPIRuntime

/// Following the list's writes: the event stream (decoded by OpenAPIRuntime's server-sent-events
/// deserializer, each event's `data` by the generated type its name says), or long polls.
extension QuireSession {
    /// Whether this session follows writes on the event stream: asked for, or `.automatic` on a client
    /// whose transport streams response bodies (a buffering transport, such as URLSessionTransport on
    /// Linux, would never hand over an event of a stream that does not end).
    var prefersEvents: Bool {
        switch options.transport {
        case .events: true
        case .automatic: client.streamsResponses
        case .longPolls: false
        }
    }

    func follow() async {
        var failures = 0
        var useEvents = prefersEvents
        while !Task.isCancelled && !isClosed {
            do {
                if isLost { try await reopen() }
                if useEvents {
                    switch try await readEvents() {
                    case .ended(let received): failures = received ? 0 : failures + 1
                    case .unavailable:
                        if options.transport == .automatic { useEvents = false } else { failures += 1 }
                    case .retry(let refusal):
                        failures += 1
                        try await pause(after: refusal, failures: failures)
                        continue
                    }
                } else {
                    // Not while an app call is on its way: a poll naming the window before its answer would be
                    // answered from that window (a retry, for the server), undoing the call. (A poll already
                    // sent when the app makes a call can still cross it: then the call's effect is undone on
                    // both sides alike, and the app's next call makes it again.)
                    await appCalls?.value
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
            if failures > 0 && !isClosed {
                try? await Task.sleep(for: .seconds(backoff(failures)))
            }
        }
    }

    enum StreamEnd {
        /// The stream ended; `received`: after at least one event (else it counts as a failure).
        case ended(received: Bool)
        case unavailable
        case retry(Refusal)
    }

    /// Reads the session's event stream (from `Last-Event-ID`: the `seq` the client holds) until it ends.
    private func readEvents() async throws -> StreamEnd {
        guard let id = sessionID else { return .ended(received: false) }
        statistics.streams += 1
        let body: HTTPBody
        // Opened in the queue of the app's calls, from the window the client holds once they are answered.
        switch try await oneAtATime({ try await self.client.events(session: id, after: await self.seq) }) {
        case .ok(let stream): body = stream
        case .refused(let refusal):
            // A refusal that names a session replaced meanwhile (by an app call's recovery) says nothing of the
            // new one.
            guard id == sessionID else { return .ended(received: true) }
            switch refusal.status {
            case 401: return .ended(received: false)  // refused again after a refreshed token: back off
            case 404 where refusal.problem == "session-not-found":
                try await recover()
                return .ended(received: true)
            case 404, 405, 501: return .unavailable
            case 409:
                statistics.resets += 1
                try await call(.reset(nil))
                return .ended(received: true)
            default: return .retry(refusal)
            }
        }
        var received = false
        do {
            return try await read(body, session: id, received: &received)
        } catch let error where received && !(error is CancellationError) && !(error is DecodingError) {
            // Cut after it served events (a network change, the app back from the background): reconnect at
            // once, as after a clean end, not after a backoff grown by earlier failures.
            return .ended(received: true)
        }
    }

    private func read(_ body: HTTPBody, session id: String, received: inout Bool) async throws -> StreamEnd {
        for try await event in body.asDecodedServerSentEvents() {
            try Task.checkCancellation()
            guard !isClosed else { return .ended(received: true) }
            guard id == sessionID else { return .ended(received: true) }  // a new session: open its stream
            let data = Data((event.data ?? "").utf8)
            switch event.event {
            case "changes":
                statistics.events += 1
                received = true
                try await apply(Answer(GeneratedJSON.decode(Components.Schemas.DiffAnswer.self, from: data)))
            case "reset":
                statistics.events += 1
                received = true
                try await apply(Answer(GeneratedJSON.decode(Components.Schemas.ResetAnswer.self, from: data)))
            case "gone":
                _ = try GeneratedJSON.decode(Components.Schemas.GoneEvent.self, from: data)
                try await recover()
                return .ended(received: true)
            default: continue
            }
        }
        return .ended(received: received)
    }

    // MARK: Waiting

    /// Waits what `Retry-After` says, else an exponential backoff with jitter.
    func pause(after refusal: Refusal, failures: Int) async throws {
        if let seconds = refusal.retryAfter {
            statistics.retryAfterWaits += 1
            try await Task.sleep(for: .seconds(seconds * Double.random(in: 1...1.2)))
        } else {
            try await Task.sleep(for: .seconds(backoff(failures)))
        }
    }

    /// Full jitter over an exponential bound: 0.2 s, 0.4 s, … up to `maxBackoff`.
    func backoff(_ failures: Int) -> Double {
        let bound = min(options.maxBackoff, 0.2 * pow(2, Double(min(failures, 16) - 1)))
        return Double.random(in: bound / 2...bound)
    }
}
