/// What answers requests: called on libmicrohttpd's threads, concurrently, so it must be `Sendable`
/// and must never block on Swift concurrency.
public protocol HTTPResponder: Sendable {
    /// Answers `request` now, or returns ``Reply/deferred(_:)`` and answers later from any thread.
    func respond(to request: Request) -> Reply

    /// The response to a request the server refused itself (see ``RequestRejection``). A default
    /// implementation renders a minimal problem document.
    func response(for rejection: RequestRejection) -> Response
}

/// A responder's answer to one request.
public enum Reply: Sendable {
    /// Send this response now.
    case response(Response)
    /// Send this prepared response now (no per-request copy of its body or headers).
    case prepared(PreparedResponse)
    /// Send this prepared response now with header fields of this request's own added (its body is still not
    /// copied; only the fields are): see ``adding(_:)``.
    case preparedWithFields(PreparedResponse, HTTPHeaders)
    /// Hold the connection (it is suspended in libmicrohttpd and holds no thread) until
    /// ``PendingResponse/resume(with:)`` is called, from any thread.
    case deferred(PendingResponse)
    /// Send the status and headers now, then a body produced piece by piece for as long as the stream
    /// lasts (server-sent events); the connection holds no thread while there is nothing to send.
    case stream(StreamingResponse)
}

extension Reply {
    /// This reply with `fields` added to the response it sends, whenever it is sent: a prepared response keeps
    /// its shared body, a deferred one gets them when it is resolved, a stream with its status.
    public func adding(_ fields: HTTPHeaders) -> Reply {
        switch self {
        case .response(var response):
            for field in fields { response.headers.add(field.name, field.value) }
            return .response(response)
        case .prepared(let prepared):
            return .preparedWithFields(prepared, fields)
        case .preparedWithFields(let prepared, var added):
            for field in fields { added.add(field.name, field.value) }
            return .preparedWithFields(prepared, added)
        case .deferred(let pending):
            pending.addFields(fields)
            return self
        case .stream(let stream):
            stream.addFields(fields)
            return self
        }
    }
}

/// A responder made of a closure.
public struct ClosureResponder: HTTPResponder {
    private let body: @Sendable (Request) -> Reply

    public init(_ body: @escaping @Sendable (Request) -> Reply) {
        self.body = body
    }

    public func respond(to request: Request) -> Reply {
        body(request)
    }
}
