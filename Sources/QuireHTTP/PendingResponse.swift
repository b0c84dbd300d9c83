internal import CMicroHTTPD
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
        switch machine.withLock({ $0.resolve(with: response) }) {
        case .accepted:
            return true
        case .resumeConnection(let connection):
            MHD_resume_connection(connection.pointer)
            return true
        case .rejected:
            return false
        }
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
            return response
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
        machine.withLock { $0.takeResponse() }
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
/// happen at most once per request and never after the request ended.
struct ConnectionHandle: @unchecked Sendable, Equatable {
    let pointer: OpaquePointer
}
