/// What answers requests: called on libmicrohttpd's threads, concurrently, so it must be `Sendable`
/// and must never block on Swift concurrency.
public protocol HTTPResponder: Sendable {
    /// Answers `request` now, or returns ``Reply/deferred(_:)`` and answers later from any thread.
    func respond(to request: Request) -> Reply

    /// The response to a request the server refused itself (see ``RequestRejection``), whose `Origin` field, when it
    /// sent one, is `origin` (so that a web page of another origin may read the refusal). A default implementation
    /// renders a minimal problem document.
    func response(for rejection: RequestRejection, origin: String?) -> Response
}

/// A responder's answer to one request.
public enum Reply: Sendable {
    /// Send this response now.
    case response(Response)
    /// Send this prepared response now (no per-request copy of its body or headers).
    case prepared(PreparedResponse)
    /// Send this prepared response now with header fields of this request's own added (its body is still not
    /// copied; only the fields are): see ``adding(_:recurring:)``.
    case preparedWithFields(PreparedResponse, AddedFields)
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
    ///
    /// `recurring`: the same fields are added to many requests of a prepared response (see ``AddedFields``).
    public func adding(_ fields: HTTPHeaders, recurring: Bool = false) -> Reply {
        switch self {
        case .response(var response):
            for field in fields { response.headers.add(field.name, field.value) }
            return .response(response)
        case .prepared(let prepared):
            return .preparedWithFields(prepared, AddedFields(fields, recurring: recurring))
        case .preparedWithFields(let prepared, var added):
            for field in fields { added.fields.add(field.name, field.value) }
            added.recurring = added.recurring && recurring
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

/// Header fields a responder adds to a prepared response for one request.
public struct AddedFields: Sendable {
    public var fields: HTTPHeaders
    /// Whether the same fields recur on many requests of the response (a rate limit's fields for a client under its
    /// limit, which say the same until the client spends faster than its bucket refills): the prepared response
    /// then keeps one shared libmicrohttpd response with them, as it does without them, instead of one made for
    /// each request with every header field added again.
    public var recurring: Bool

    public init(_ fields: HTTPHeaders, recurring: Bool = false) {
        self.fields = fields
        self.recurring = recurring
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
