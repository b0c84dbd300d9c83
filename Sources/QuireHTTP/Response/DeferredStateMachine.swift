/// The life of one deferred response, as a value: each event returns the action to perform.
///
/// Two threads meet here: the connection's libmicrohttpd thread (attach, suspend, the call after
/// resume, the end of the request) and whoever resolves the response. The state machine guarantees
/// one resume per suspend, a suspend before its resume, and no connection use after the request ended.
struct DeferredStateMachine: Sendable {
    enum State: Sendable {
        /// The handler returned; the server has not attached the connection yet.
        case waiting
        /// Resolved before the server attached: the server queues it directly, without suspending.
        case resolvedEarly(Response)
        /// The server is suspending the connection right now.
        case suspending(ConnectionHandle)
        /// Resolved while the server was suspending: the server resumes once the suspend is done.
        case resolvedWhileSuspending(ConnectionHandle, Response)
        /// Suspended, waiting for a response.
        case suspended(ConnectionHandle)
        /// Resumed: libmicrohttpd will call the access handler, which takes this response.
        case resuming(Response)
        /// The response was handed to libmicrohttpd, or the request ended.
        case finished
    }

    enum AttachAction: Equatable { case queue(Response), suspend }
    enum ResolveAction: Equatable { case accepted, resumeConnection(ConnectionHandle), rejected }
    enum SuspendedAction: Equatable { case none, resumeConnection(ConnectionHandle) }

    private(set) var state: State = .waiting
    /// What the responder changes in the response it gets (``adjust(_:)``).
    private var adjustment: (@Sendable (Response) -> Response)?

    var isResolved: Bool {
        switch state {
        case .waiting, .suspending, .suspended: false
        case .resolvedEarly, .resolvedWhileSuspending, .resuming, .finished: true
        }
    }

    mutating func attach(to connection: ConnectionHandle) -> AttachAction {
        switch state {
        case .waiting:
            state = .suspending(connection)
            return .suspend
        case .resolvedEarly(let response):
            state = .finished
            return .queue(response)
        case .suspending, .resolvedWhileSuspending, .suspended, .resuming, .finished:
            preconditionFailure("a pending response is attached once, by the server")
        }
    }

    mutating func didSuspend() -> SuspendedAction {
        switch state {
        case .suspending(let connection):
            state = .suspended(connection)
            return .none
        case .resolvedWhileSuspending(let connection, let response):
            state = .resuming(response)
            return .resumeConnection(connection)
        case .waiting, .resolvedEarly, .suspended, .resuming, .finished:
            preconditionFailure("didSuspend follows attach")
        }
    }

    /// Has `transform` change the response: the one resolved already if it is not sent yet, or the one to come.
    /// The responder calls it before the server attaches the connection, so no response is sent unchanged.
    mutating func adjust(_ transform: @escaping @Sendable (Response) -> Response) {
        if case .resolvedEarly(let response) = state {
            state = .resolvedEarly(transform(response))
        } else {
            adjustment = transform
        }
    }

    mutating func resolve(with response: Response) -> ResolveAction {
        let response = adjustment?(response) ?? response
        switch state {
        case .waiting:
            state = .resolvedEarly(response)
            return .accepted
        case .suspending(let connection):
            state = .resolvedWhileSuspending(connection, response)
            return .accepted
        case .suspended(let connection):
            state = .resuming(response)
            return .resumeConnection(connection)
        case .resolvedEarly, .resolvedWhileSuspending, .resuming, .finished:
            return .rejected
        }
    }

    mutating func takeResponse() -> Response? {
        guard case .resuming(let response) = state else { return nil }
        state = .finished
        return response
    }

    mutating func finish() {
        state = .finished
    }
}

extension Response: Equatable {
    public static func == (lhs: Response, rhs: Response) -> Bool {
        lhs.status == rhs.status && lhs.headers == rhs.headers && lhs.body == rhs.body
    }
}
