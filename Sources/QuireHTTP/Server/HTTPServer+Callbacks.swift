internal import CMicroHTTPD
internal import CQuireTLS
import Glibc
public import Logging
import Synchronization

// libmicrohttpd's callbacks. They run on its threads, so they are free functions of this (non-isolated)
// module: a closure written at the top level of an executable's main.swift would be main-actor isolated.
//
// Each reaches the server through `withServer`: the daemon's context holds a retained reference to it
// (`DaemonContexts`) for as long as the daemon runs, so a callback borrows it without a retain and release of
// its own. That pair is not free here: the server is referenced weakly (by the metrics), so its count lives in
// a side table and every retain of it takes the runtime's slow path, on every call of every request.
//
// The access handler, which these hand each request to, is `HTTPServer+AccessHandler.swift`; what a connection
// keeps between the calls is its ``ConnectionContext``.

func accessHandlerTrampoline(
    cls: UnsafeMutableRawPointer?,
    connection: OpaquePointer?,
    url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?,
    version: UnsafePointer<CChar>?,
    uploadData: UnsafePointer<CChar>?,
    uploadDataSize: UnsafeMutablePointer<Int>?,
    requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let url, let method, let uploadDataSize, let requestSlot else { return .NO }
    return withServer(cls) { $0.handle(connection, url, method, version, uploadData, uploadDataSize, requestSlot) }
}

/// Calls `body` with the server of a libmicrohttpd context, borrowed (see the top of this file).
@inline(__always)
private func withServer<Result>(_ context: UnsafeMutableRawPointer, _ body: (HTTPServer) -> Result) -> Result {
    Unmanaged<HTTPServer>.fromOpaque(context)._withUnsafeGuaranteedRef(body)
}

/// libmicrohttpd's URI log callback: a request line has arrived. The request's context starts here, so
/// that the whole-request deadline covers the headers too.
func requestStartedTrampoline(
    cls: UnsafeMutableRawPointer?,
    uri: UnsafePointer<CChar>?,
    connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    guard let cls, let connection else { return nil }
    return withServer(cls) { $0.beginRequest(on: connection) }
}

func requestCompletedTrampoline(
    cls: UnsafeMutableRawPointer?,
    connection: OpaquePointer?,
    requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    termination: MHD_RequestTerminationCode
) {
    guard let cls, let requestSlot, let raw = requestSlot.pointee else { return }
    requestSlot.pointee = nil
    let context = Unmanaged<ConnectionContext>.fromOpaque(raw).takeUnretainedValue()
    if context.isCorked, let tls = context.tls {
        _ = quire_tls_flush(tls, 1000)
    }
    withServer(cls) { server in
        server.deadlines.finished(socket: context.socket)
        if let pending = context.pending {
            pending.requestEnded()
            server.unregister(pending)
        }
        if let stream = context.stream {
            stream.requestEnded()
            server.unregister(stream)
        }
        server.requestFinished()
    }
    if context.isOwnedByRequest {
        Unmanaged<ConnectionContext>.fromOpaque(raw).release()
    } else {
        context.reset()
    }
}

/// libmicrohttpd's connection notifications: a closed connection leaves the server's count. Over HTTPS a
/// new connection is given the current certificate before its handshake starts, and holds it until closed.
func connectionNotifyTrampoline(
    cls: UnsafeMutableRawPointer?,
    connection: OpaquePointer?,
    socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    code: MHD_ConnectionNotificationCode
) {
    guard let cls else { return }
    withServer(cls) { server in
        switch code {
        case .CONNECTION_NOTIFY_STARTED:
            guard let connection, let socketContext else { return }
            let context = ConnectionContext(socket: quire_mhd_connection_socket(connection))
            socketContext.pointee = Unmanaged.passRetained(context).toOpaque()
            server.prepareTLS(connection, context: context)
        case .CONNECTION_NOTIFY_CLOSED:
            let held = socketContext?.pointee.map { Unmanaged<ConnectionContext>.fromOpaque($0).takeRetainedValue() }
            socketContext?.pointee = nil
            // Before libmicrohttpd closes the socket: no deadline may outlive its connection.
            if let socket = held?.socket ?? connection.map(quire_mhd_connection_socket) {
                server.deadlines.finished(socket: socket)
            }
            if let tls = held?.tls {
                if let credentials = quire_tls_connection_free(tls) {
                    Unmanaged<TLSCredentials>.fromOpaque(credentials).release()
                }
            }
            server.openConnections.closed()
        default:
            break
        }
    }
}

extension HTTPServer {
    /// Gives a new TLS connection the current credentials (retained by the connection's state,
    /// `quire_tls_connection`, which its context holds until it closes) and the session-ticket key. A
    /// connection that cannot be prepared is refused at its handshake (the daemon's own certificate callback
    /// refuses), never served another certificate.
    fileprivate func prepareTLS(_ connection: OpaquePointer, context: ConnectionContext) {
        guard servesTLS else { return }  // plain HTTP: no lock taken per connection
        guard let (credentials, ticketKey) = tlsState.withLock({ $0.map { ($0.credentials, $0.ticketKey) } }) else {
            return
        }
        let retained = Unmanaged.passRetained(credentials).toOpaque()
        guard let state = quire_tls_connection_new(retained, context.socket) else {
            Unmanaged<TLSCredentials>.fromOpaque(retained).release()
            libmicrohttpdLogTrampoline(
                context: Unmanaged.passUnretained(self).toOpaque(),
                message: "cannot prepare a TLS connection: no memory")
            return
        }
        context.tls = state
        let result = quire_tls_prepare_connection(connection, state, credentials.pointer, ticketKey?.pointer)
        if result < 0 {
            libmicrohttpdLogTrampoline(
                context: Unmanaged.passUnretained(self).toOpaque(),
                message: "cannot prepare a TLS connection: \(String(cString: gnutls_strerror(result)))")
        }
    }
}

func libmicrohttpdLogTrampoline(context: UnsafeMutableRawPointer?, message: UnsafePointer<CChar>?) {
    guard let context, let message else { return }
    var text = String(cString: message)
    while text.last == "\n" { text.removeLast() }
    withServer(context) { server in
        let suppressed: Int? = server.libraryMessages.withLock { logs in
            if logs.count >= 256 && logs[text] == nil { logs.removeAll() }  // bounded: messages carry numbers
            return logs[text, default: FailureLog()].record(now: .now)
        }
        guard let suppressed else { return }
        server.logger.warning(
            "libmicrohttpd: \(text)", metadata: suppressed > 0 ? ["suppressed": "\(suppressed)"] : [:])
    }
}

/// Routes libmicrohttpd's panics (internal inconsistencies it cannot continue from) to `logger`, then
/// aborts, as libmicrohttpd requires. Process-wide; the last call wins.
public func routeLibmicrohttpdPanics(to logger: Logger) {
    panicLogger.withLock { $0 = logger }
    MHD_set_panic_func(libmicrohttpdPanicTrampoline, nil)
}

private let panicLogger = Mutex<Logger?>(nil)

private func libmicrohttpdPanicTrampoline(
    cls: UnsafeMutableRawPointer?,
    file: UnsafePointer<CChar>?,
    line: UInt32,
    reason: UnsafePointer<CChar>?
) {
    let where_ = file.map { String(cString: $0) } ?? "?"
    let why = reason.map { String(cString: $0) } ?? "unknown"
    panicLogger.withLock { $0 }?.critical("libmicrohttpd panic at \(where_):\(line): \(why)")
    abort()
}

extension HTTPServer {
    /// Starts a request on `connection`: its context for the request's slot (the connection's own, borrowed),
    /// the request counted in flight and its whole-request deadline started.
    func beginRequest(on connection: OpaquePointer) -> UnsafeMutableRawPointer {
        let raw: UnsafeMutableRawPointer
        let context: ConnectionContext
        if let held = quire_mhd_socket_context(connection) {
            raw = held
            context = Unmanaged<ConnectionContext>.fromOpaque(held).takeUnretainedValue()
            // A request libmicrohttpd never completed (it completes each one): nothing of it carried over.
            if context.hasHeaders { context.reset() }
        } else {  // a connection libmicrohttpd did not announce (it announces every one; kept as a fallback)
            context = ConnectionContext(socket: quire_mhd_connection_socket(connection), isOwnedByRequest: true)
            raw = Unmanaged.passRetained(context).toOpaque()
        }
        requestStarted()
        deadlines.started(socket: context.socket)
        return raw
    }
}
