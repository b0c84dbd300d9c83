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
    /// Hold the connection (it is suspended in libmicrohttpd and holds no thread) until
    /// ``PendingResponse/resume(with:)`` is called, from any thread.
    case deferred(PendingResponse)
    /// Send the status and headers now, then a body produced piece by piece for as long as the stream
    /// lasts (server-sent events); the connection holds no thread while there is nothing to send.
    case stream(StreamingResponse)
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
