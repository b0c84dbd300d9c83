import FoundationEssentials
import QuireCore
import QuireHTTP

/// `GET /v1/sessions/{id}/events` (openapi.yaml): the session's answers pushed as server-sent events.
extension APIContext {
    /// Opens the session's event stream, from the window named by `Last-Event-ID`, `seq` or `since` (or
    /// the current one when none is named). Errors before the stream starts are problem documents.
    func events(_ request: Request, _ parameters: RouteParameters, _ caller: Caller) throws(Problem) -> Reply {
        let id = parameters["id"] ?? ""
        var position: SessionPosition?
        if let last = request.headers["Last-Event-ID"] {
            guard let number = UInt64(last.trimming(" \t")), number >= 1, number < 1 << 53 else {
                throw Problem(.invalidRequest, detail: "Last-Event-ID must be the seq of an event.")
            }
            position = .seq(number)
        } else if request.queryValue("since") != nil || request.queryValue("seq") != nil {
            position = try RequestInput.position(
                since: RequestInput.queryInteger(request, "since"), seq: RequestInput.queryInteger(request, "seq"))
        }
        let (session, _) = try sessionAndList(id)
        if let position, !session.holds(position) {
            throw Self.sinceMismatch(position, version: session.current.version.version, seq: session.seq)
        }
        let stream = EventStream(
            session: id, list: session.list, position: position, acceptedUntil: caller.acceptedUntil,
            headers: Self.eventStreamHeaders
        ) { [self] signals in nextEvent(session: id, signals) }
        try streams.open(stream)
        return .stream(stream.response)
    }

    static let eventStreamHeaders: HTTPHeaders = [
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-store",
        // nginx (and proxies that follow it) pass each event on at once instead of buffering the body.
        "X-Accel-Buffering": "no",
    ]

    /// The next piece of a session's stream, from what it was told since the last one.
    private func nextEvent(session id: String, _ signals: EventStream.Signals) -> StreamingResponse.Next {
        if signals.ended { return .end }
        var out: [UInt8] = signals.opened ? [] : Array(": quire event stream\n\n".utf8)
        if signals.gone {
            out.append(contentsOf: "event: gone\ndata: ".utf8)
            out.append(contentsOf: #"{"session":"#.utf8)
            JSONWriter.writeString(id, into: &out)
            out.append(contentsOf: "}\n\n".utf8)
            return .send(out)
        }
        if signals.changed {
            do throws(Problem) {
                let reply = try answer(session: id, since: signals.position, change: .update, defaultLimit: false)
                // A write outside the window still moves it to a new version under a new seq (its page
                // may change too): the event is sent, with no changes, so that the client's seq follows.
                if !reply.isEmpty || reply.answer.seq != reply.answer.fromSeq {
                    Self.appendEvent(reply.answer, into: &out)
                }
            } catch {
                return nextEventAfter(error, session: id, prefix: out)
            }
        }
        if signals.heartbeat && out.isEmpty { out.append(contentsOf: ": keep-alive\n\n".utf8) }
        return out.isEmpty ? .wait : .send(out)
    }

    /// What a stream sends when its next answer failed: `gone` when the session is, else (the session was
    /// being changed by its own requests) it tries again at the next wake.
    private func nextEventAfter(_ problem: Problem, session id: String, prefix: [UInt8]) -> StreamingResponse.Next {
        if problem.kind == .sessionNotFound {
            streams.end(session: id, gone: true)
        } else {
            streams.retry(session: id)
        }
        return prefix.isEmpty ? .wait : .send(prefix)
    }

    /// `id: <seq>`, `event: changes` (or `reset`), `data: <the answer as changes would give it>`.
    static func appendEvent(_ answer: SessionAnswer, into out: inout [UInt8]) {
        out.append(contentsOf: "id: ".utf8)
        JSONWriter.writeInteger(answer.seq, into: &out)
        if case .reset = answer.content {
            out.append(contentsOf: "\nevent: reset\ndata: ".utf8)
        } else {
            out.append(contentsOf: "\nevent: changes\ndata: ".utf8)
        }
        // An item's stored JSON may hold line breaks between its tokens: a line feed continues the data on
        // a new `data:` line (the client joins them with a line feed again); a carriage return is a space.
        for byte in ResponseBodies.answer(answer) {
            switch byte {
            case UInt8(ascii: "\n"): out.append(contentsOf: "\ndata: ".utf8)
            case UInt8(ascii: "\r"): out.append(UInt8(ascii: " "))
            default: out.append(byte)
            }
        }
        out.append(contentsOf: "\n\n".utf8)
    }
}
