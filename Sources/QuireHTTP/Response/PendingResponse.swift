internal import CMicroHTTPD
import Glibc
import Logging
import Synchronization

/// A response that a handler gives later, from any thread: the request's connection is suspended in
/// libmicrohttpd meanwhile, and holds no thread.
///
/// Resumed exactly once: the first ``resume(with:)`` wins and later calls return `false`; a call after
/// the request ended (the server shut down, the client went away) is a no-op. On shutdown, the server
/// resumes every pending response with the one its `onShutdown` closure gives.
public final class PendingResponse: Sendable {
    private let machine = Mutex(DeferredStateMachine())
    private let onShutdown: @Sendable () -> Response
    private let observation = Mutex(Observation.waiting)
    /// Fields added to whatever response this gets (see ``addFields(_:)``).
    private let addedFields = Mutex(HTTPHeaders())

    private enum Observation {
        case waiting
        case observed(@Sendable (Response) -> Void)
        case resolved(Response)
        case done
    }

    /// - Parameter onShutdown: the response to send when the server stops before anyone resumed this.
    public init(onShutdown: @escaping @Sendable () -> Response) {
        self.onShutdown = onShutdown
    }

    /// Sends `response` to the waiting client.
    ///
    /// - Returns: `true` when this call delivered the response, `false` when another call already did
    ///   or the request is over.
    @discardableResult
    public func resume(with response: Response) -> Bool {
        let action = machine.withLock { machine in
            let action = machine.resolve(with: response)
            if case .rejected = action { return action }
            // Observed (counted in the metrics, logged) under the lock that made this response the request's,
            // so before any thread can send it: a client that has its answer and then reads /metrics finds it
            // counted (observed after the send, the count could be one short for that client).
            notify(response)
            // Counted under the lock that decided it, so that shutdown, which waits for the count to
            // drop to zero before stopping the daemon, cannot miss a resume about to happen.
            if case .resumeConnection(let connection) = action { connection.resumes?.begin() }
            return action
        }
        switch action {
        case .accepted:
            return true
        case .resumeConnection(let connection):
            MHD_resume_connection(connection.pointer)
            connection.resumes?.end()
            return true
        case .rejected:
            return false
        }
    }

    /// Calls `observer` once with the response this request gets (at once when it already has one), on
    /// the resolving thread: for access logs and metrics. One observer per pending response.
    public func whenResolved(_ observer: @escaping @Sendable (Response) -> Void) {
        let resolved: Response? = observation.withLock { state in
            switch state {
            case .waiting:
                state = .observed(observer)
                return nil
            case .resolved(let response):
                state = .done
                return response
            case .observed, .done:
                return nil
            }
        }
        if let resolved { observer(resolved) }
    }

    private func notify(_ response: Response) {
        let observer: (@Sendable (Response) -> Void)? = observation.withLock { state in
            switch state {
            case .waiting:
                state = .resolved(response)
                return nil
            case .observed(let observer):
                state = .done
                return observer
            case .resolved, .done:
                return nil
            }
        }
        observer?(response)
    }

    /// Has `transform` change the response this request gets, whether it was given already or is to come: for the
    /// responder that returns this, before the server attaches it (a trace id in a `5xx` problem).
    public func adjust(_ transform: @escaping @Sendable (Response) -> Response) {
        machine.withLock { $0.adjust(transform) }
    }

    /// Adds `fields` to the response this request gets, whoever gives it (the responder that deferred it adds the
    /// fields of the request, such as its rate limit, before the server attaches it).
    public func addFields(_ fields: HTTPHeaders) {
        addedFields.withLock { added in
            for field in fields { added.add(field.name, field.value) }
        }
    }

    private func withAddedFields(_ response: Response) -> Response {
        let added = addedFields.withLock { $0 }
        guard added.count > 0 else { return response }
        var response = response
        for field in added { response.headers.add(field.name, field.value) }
        return response
    }

    /// `true` once a response was given or the request ended.
    public var isResolved: Bool {
        machine.withLock { $0.isResolved }
    }

    // MARK: Used by the server, on the connection's libmicrohttpd thread

    /// Called right after the handler returned this: answer now if already resolved, else suspend.
    func attach(to connection: ConnectionHandle) -> Response? {
        switch machine.withLock({ $0.attach(to: connection) }) {
        case .queue(let response):
            return withAddedFields(response)
        case .suspend:
            MHD_suspend_connection(connection.pointer)
            if case .resumeConnection(let handle) = machine.withLock({ $0.didSuspend() }) {
                MHD_resume_connection(handle.pointer)
            }
            return nil
        }
    }

    /// Called when libmicrohttpd calls the access handler again after a resume.
    func takeResponse() -> Response? {
        machine.withLock { $0.takeResponse() }.map(withAddedFields)
    }

    /// Called when the request ended, whatever the reason: nothing may touch the connection afterwards.
    func requestEnded() {
        machine.withLock { $0.finish() }
    }

    /// Called by the server while it shuts down.
    func resumeForShutdown() {
        resume(with: onShutdown())
    }
}

/// A libmicrohttpd connection, carried across threads by the deferred-response state machine.
///
/// `@unchecked Sendable` is safe because the pointer is only passed to `MHD_suspend_connection` (on the
/// connection's own thread) and `MHD_resume_connection` (documented as callable from any thread), and
/// only while ``DeferredStateMachine`` says the connection is suspended, which the state machine makes
/// happen at most once per request and never after the request ended; and because shutdown waits for
/// every resume under way (`resumes`) before `MHD_stop_daemon` frees the connection.
struct ConnectionHandle: @unchecked Sendable, Equatable {
    let pointer: OpaquePointer
    /// The server's count of `MHD_resume_connection` calls under way.
    var resumes: ResumeTracker? = nil

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.pointer == rhs.pointer
    }
}

/// The `MHD_resume_connection` calls under way on other threads than libmicrohttpd's. Shutdown waits
/// for none to be left before `MHD_stop_daemon`: a connection still suspended then (its resume decided
/// but not yet called) makes libmicrohttpd panic, and a resume called after it would touch freed memory.
final class ResumeTracker: Sendable {
    private let underWay = Atomic<Int>(0)

    func begin() {
        underWay.add(1, ordering: .sequentiallyConsistent)
    }

    func end() {
        underWay.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Waits until no resume is under way. A resume takes microseconds and never blocks for long, so
    /// this waits as long as it takes (stopping before it would crash the process); past a second, it
    /// says so once.
    func waitUntilIdle(logger: Logger) {
        let start = ContinuousClock.now
        var warned = false
        while underWay.load(ordering: .sequentiallyConsistent) > 0 {
            if !warned && ContinuousClock.now - start > .seconds(1) {
                logger.warning("shutdown waits for deferred responses being resumed on other threads")
                warned = true
            }
            usleep(50)
        }
    }
}
