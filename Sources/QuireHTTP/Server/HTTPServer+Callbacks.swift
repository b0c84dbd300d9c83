internal import CMicroHTTPD
internal import CQuireFraming
import Glibc
public import Logging
import Synchronization

// libmicrohttpd's callbacks. They run on its threads, so they are free functions of this (non-isolated)
// module: a closure written at the top level of an executable's main.swift would be main-actor isolated.
//
// Each reaches the server through `withServer`: the daemon's context holds a retained reference to it
// (`DaemonContexts`) for as long as the daemon runs, so a callback borrows it without a retain and release of
// its own. That pair is not free here: the server is referenced weakly (by the metrics), so its count lives in
// a side table and every retain of it takes the runtime's slow path (about 1.5% of a page's CPU, measured).

/// What one request carries between libmicrohttpd's calls, and what its connection keeps across requests (its
/// socket and TLS state; what helps its next request is kept by the thread instead: ``ThreadRequestCache``).
///
/// One per connection, made when libmicrohttpd announces the connection and kept in its socket context until
/// it closes (a retained reference); each request borrows it through its `void **` slot, from its request line to
/// the completion callback, which clears it for the connection's next request (`reset()`). A request costs no
/// object of its own: allocating, filling and freeing one per request was a fixed cost of every request.
final class RequestContext {
    /// The connection's socket, or -1.
    let socket: Int32
    /// Made for the one request whose connection had no context (libmicrohttpd announces every connection
    /// before its first request, so this is a fallback): that request's slot owns it, and its completion
    /// releases it.
    let isOwnedByRequest: Bool
    /// A TLS connection's state (its credentials and its cork), freed when the connection closes.
    var tls: UnsafeMutablePointer<quire_tls_connection>?

    // The request's own state, cleared by `reset()`.

    /// `false` until the access handler saw the request's headers (and so set any of the state below).
    var hasHeaders = false
    /// The body gathered so far. Touched only when a body came (`bodyBytesReceived > 0`) or one is declared encoded
    /// (`hasContentEncoding`): the chunks are appended in place, so the compiler checks every access to it at run
    /// time (`swift_beginAccess`, ~60 instructions each, callgrind), and a request without a body should pay none.
    var body: [UInt8] = []
    var bodyBytesReceived = 0
    /// The bytes the request's header fields and query items take as records, as the framing scan counted them.
    var fieldSizes = (headers: 0, query: 0)
    var isTooLarge = false
    /// A response was queued on the first call (an early rejection): nothing else happens.
    var isAnswered = false
    var pending: PendingResponse?
    /// A streaming response being sent.
    var stream: StreamingResponse?
    /// `X-Request-Id` of the request (taken from it when well formed, else generated), echoed.
    var requestID = RequestIdentifier.Value.given("")
    /// A prepared response being sent, kept alive until the request completes.
    var prepared: PreparedResponse?
    /// Whether the client sent its own `X-Request-Id` (echoed on every response, prepared ones too).
    var requestIDWasSent = false
    /// What the request accepts (`Accept-Encoding`) and holds (`If-None-Match`), for its response.
    var negotiation = Negotiation()
    var ifNoneMatch: String?
    /// The request has a `Content-Encoding` field: its body is decoded.
    var hasContentEncoding = false
    /// The connection is closed after this request's response (its framing was refused).
    var closesConnection = false
    /// The response was queued with its TLS records corked: the completion callback sends them.
    var isCorked = false

    init(socket: Int32, isOwnedByRequest: Bool = false) {
        self.socket = socket
        self.isOwnedByRequest = isOwnedByRequest
    }

    /// Ready for the connection's next request: the request's state cleared, and what it held released (a
    /// body, a prepared response, a finished long poll or stream), so that an idle connection holds none of it.
    func reset() {
        hasHeaders = false
        if bodyBytesReceived > 0 { body = [] }
        bodyBytesReceived = 0
        fieldSizes = (0, 0)
        isTooLarge = false
        isAnswered = false
        pending = nil
        stream = nil
        requestID = .given("")
        prepared = nil
        requestIDWasSent = false
        negotiation = Negotiation()
        ifNoneMatch = nil
        hasContentEncoding = false
        closesConnection = false
        isCorked = false
    }
}

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
    let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
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
        Unmanaged<RequestContext>.fromOpaque(raw).release()
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
            let context = RequestContext(socket: quire_mhd_connection_socket(connection))
            socketContext.pointee = Unmanaged.passRetained(context).toOpaque()
            server.prepareTLS(connection, context: context)
        case .CONNECTION_NOTIFY_CLOSED:
            let held = socketContext?.pointee.map { Unmanaged<RequestContext>.fromOpaque($0).takeRetainedValue() }
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

extension FramingRefusal {
    fileprivate init(_ refusal: quire_framing_refusal) {
        self =
            switch refusal {
            case QUIRE_FRAMING_DUPLICATE_CONTENT_LENGTH: .duplicateContentLength
            case QUIRE_FRAMING_INVALID_FIELD_NAME: .invalidFieldName
            case QUIRE_FRAMING_OBSOLETE_LINE_FOLDING: .obsoleteLineFolding
            case QUIRE_FRAMING_HOST: .host
            case QUIRE_FRAMING_CONTENT_LENGTH_WITH_TRANSFER_ENCODING: .contentLengthWithTransferEncoding
            case QUIRE_FRAMING_INVALID_TRANSFER_ENCODING: .invalidTransferEncoding
            case QUIRE_FRAMING_UNKNOWN_TRANSFER_CODING: .unknownTransferCoding
            case QUIRE_FRAMING_INVALID_FIELD_VALUE: .invalidFieldValue
            default: preconditionFailure("quire_framing_check returned \(refusal.rawValue), which is no refusal")
            }
    }
}

extension HTTPServer {
    /// Gives a new TLS connection the current credentials (retained by the connection's state,
    /// `quire_tls_connection`, which its context holds until it closes) and the session-ticket key. A
    /// connection that cannot be prepared is refused at its handshake (the daemon's own certificate callback
    /// refuses), never served another certificate.
    fileprivate func prepareTLS(_ connection: OpaquePointer, context: RequestContext) {
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
    fileprivate func beginRequest(on connection: OpaquePointer) -> UnsafeMutableRawPointer {
        let raw: UnsafeMutableRawPointer
        let context: RequestContext
        if let held = quire_mhd_socket_context(connection) {
            raw = held
            context = Unmanaged<RequestContext>.fromOpaque(held).takeUnretainedValue()
            // A request libmicrohttpd never completed (it completes each one): nothing of it carried over.
            if context.hasHeaders { context.reset() }
        } else {  // a connection libmicrohttpd did not announce (it announces every one; kept as a fallback)
            context = RequestContext(socket: quire_mhd_connection_socket(connection), isOwnedByRequest: true)
            raw = Unmanaged.passRetained(context).toOpaque()
        }
        requestStarted()
        deadlines.started(socket: context.socket)
        return raw
    }
}

extension HTTPServer {
    /// libmicrohttpd's access handler: called first with the headers, then once per body chunk, then
    /// once more (and once again after a deferred response is resumed).
    func handle(
        _ connection: OpaquePointer,
        _ url: UnsafePointer<CChar>,
        _ method: UnsafePointer<CChar>,
        _ version: UnsafePointer<CChar>?,
        _ uploadData: UnsafePointer<CChar>?,
        _ uploadDataSize: UnsafeMutablePointer<Int>,
        _ requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let context: RequestContext
        if let raw = requestSlot.pointee {
            context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        } else {  // no request-line callback ran (it always does; kept as a fallback)
            let raw = beginRequest(on: connection)
            requestSlot.pointee = raw
            context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        }
        if !context.hasHeaders {
            // First call: headers only. Refuse a smuggler's framing, and a declared oversized body, before
            // reading the body.
            context.hasHeaders = true
            let http10 = version.map { strcmp($0, "HTTP/1.0") == 0 } ?? false
            // The scan that checks the framing also finds the fields read here: no lookup walks them again.
            var fields = quire_framing_fields()
            let framing = quire_framing_check(connection, !http10, &fields)
            (context.requestID, context.requestIDWasSent) = RequestIdentifier.of(
                fields, scannedAll: framing == QUIRE_FRAMING_OK, on: connection)
            if framing != QUIRE_FRAMING_OK {  // the fields were not all read: the answer is not negotiated
                context.isAnswered = true
                context.closesConnection = true
                let refusal = FramingRefusal(framing)
                countRefusal(refusal)
                return queue(responder.response(for: .malformedFraming(refusal)), on: connection, context: context)
            }
            context.fieldSizes = (fields.header_bytes, fields.query_bytes)
            context.negotiation = Negotiation(
                acceptEncoding: Self.value(
                    fields.accept_encoding, fields.accept_encoding_size, fields.accept_encodings,
                    named: "Accept-Encoding", on: connection, sizes: context.fieldSizes))
            context.ifNoneMatch = Self.value(
                fields.if_none_match, fields.if_none_match_size, fields.if_none_matches, named: "If-None-Match",
                on: connection, sizes: context.fieldSizes)
            context.hasContentEncoding = fields.content_encodings > 0
            if Self.declaredBodyLength(fields) > configuration.maxBodyBytes {
                context.isAnswered = true
                return queue(
                    responder.response(for: .payloadTooLarge(limit: configuration.maxBodyBytes)), on: connection,
                    context: context)
            }
            return .YES
        }
        if uploadDataSize.pointee > 0 {
            return receiveBody(uploadData, count: uploadDataSize, into: context)
        }
        if context.isAnswered { return .YES }
        if let deferred = context.pending {
            // The access handler is called again after a resume: the response is ready.
            guard let response = deferred.takeResponse() else { return .YES }
            return queue(response, on: connection, context: context)
        }
        deadlines.finished(socket: context.socket)  // the whole request is in: a long poll may wait as long as it likes
        if context.isTooLarge {
            return queue(
                responder.response(for: .payloadTooLarge(limit: configuration.maxBodyBytes)), on: connection,
                context: context)
        }
        let cache = ThreadRequestCache.current
        var (headers, query) = cache._withUnsafeGuaranteedRef {
            RequestFields.of(connection, sizes: context.fieldSizes, reusing: &$0.fieldBuffer)
        }
        var body: [UInt8] = []
        if context.bodyBytesReceived > 0 || context.hasContentEncoding {
            switch decodeBody(context.body, headers: &headers, declared: context.hasContentEncoding) {
            case .decoded(let decoded):
                body = decoded
            case .refused(let rejection):
                return queue(responder.response(for: rejection), on: connection, context: context)
            }
            context.body = []
        }
        let request = Request(
            method: Self.methodName(method),
            path: cache._withUnsafeGuaranteedRef { $0.path(url) },
            query: query,
            headers: headers,
            body: body,
            identifier: context.requestID
        )
        switch responder.respond(to: request) {
        case .response(let response):
            return queue(response, on: connection, context: context)
        case .prepared(let prepared):
            return queue(prepared, on: connection, context: context)
        case .deferred(let deferred):
            context.pending = deferred
            if !register(deferred) {
                deferred.resumeForShutdown()
            }
            if let response = deferred.attach(to: ConnectionHandle(pointer: connection, resumes: resumes)) {
                return queue(response, on: connection, context: context)
            }
            return .YES
        case .stream(let stream):
            context.stream = stream
            if !register(stream) {
                stream.finish()  // draining: the headers, then the end at once
            }
            stream.attach(to: ConnectionHandle(pointer: connection, resumes: resumes))
            var extra = extraHeaders(context)
            if let coding = streamCoding(stream, context.negotiation) {
                stream.encode(as: coding, level: configuration.compression.level)
                extra.contentEncoding = coding
                extra.varyByEncoding = true
            }
            let handle = stream.makeLibmicrohttpdResponse(extra: extra)
            defer { MHD_destroy_response(handle) }
            if let tls = context.tls { quire_tls_uncorked(tls) }
            return MHD_queue_response(connection, UInt32(stream.status), handle)
        }
    }

    /// Gathers one body chunk, within the limit. Past the limit the bytes are read and dropped until the
    /// body ends, and the request gets `413` on its final call: libmicrohttpd cannot queue a response in
    /// the middle of a body, and closing the connection instead would cut the client off while it still
    /// sends (curl: "Send failure: Broken pipe", no answer). Reading on is what nginx's lingering close
    /// does; it costs no memory, and the whole-request deadline (`server.requestTimeout`) bounds how long
    /// a body that never ends is read.
    private func receiveBody(
        _ data: UnsafePointer<CChar>?,
        count: UnsafeMutablePointer<Int>,
        into context: RequestContext
    ) -> MHD_Result {
        let size = count.pointee
        count.pointee = 0
        context.bodyBytesReceived += size
        if context.isAnswered { return .YES }
        if context.bodyBytesReceived > configuration.maxBodyBytes {
            if !context.isTooLarge {
                context.isTooLarge = true
                context.body = []
            }
            return .YES
        }
        if let data {
            context.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size))
        }
        return .YES
    }

    /// The value of a field as the framing scan found it (`first`, of `size` bytes, and how many such fields
    /// there are): `nil` without one; the values of all, joined with `,` (RFC 9110 §5.3), when it is repeated
    /// (read from the request's fields, of the `sizes` the scan counted).
    private static func value(
        _ first: UnsafePointer<CChar>?, _ size: Int, _ count: UInt32, named name: String, on connection: OpaquePointer,
        sizes: (headers: Int, query: Int)
    ) -> String? {
        guard let first else { return nil }
        guard count > 1 else {
            return String(decoding: UnsafeRawBufferPointer(start: first, count: size), as: UTF8.self)
        }
        var buffer: FieldBytes?  // a repeated field is rare: its fields are read into a buffer of their own
        return RequestFields.of(connection, sizes: sizes, reusing: &buffer).headers.values(for: name).joined(
            separator: ",")
    }

    /// The request's declared `Content-Length`, as the framing scan found it; 0 without one.
    private static func declaredBodyLength(_ fields: quire_framing_fields) -> Int {
        guard let value = fields.content_length else { return 0 }
        // libmicrohttpd itself rejects a malformed Content-Length with 400; a huge one saturates.
        let text = String(
            decoding: UnsafeRawBufferPointer(start: value, count: fields.content_length_size), as: UTF8.self)
        return Int(text) ?? Int.max
    }

    /// Hands `response`, as negotiated for the request (see `wireResponse`), to libmicrohttpd, which copies
    /// the body; adds `X-Request-Id`, and `Connection: close` while draining.
    private func queue(_ response: Response, on connection: OpaquePointer, context: RequestContext) -> MHD_Result {
        let wire = wireResponse(response, context.negotiation, ifNoneMatch: context.ifNoneMatch)
        return queueAsIs(wire.response, on: connection, context: context, vary: wire.vary, noStore: wire.noStore)
    }

    /// Queues `response` as it is, with the request's own fields and, when asked, `Vary: Accept-Encoding` and
    /// `Cache-Control: no-store`.
    private func queueAsIs(
        _ response: Response, on connection: OpaquePointer, context: RequestContext, vary: Bool = false,
        noStore: Bool = false
    ) -> MHD_Result {
        var extra = extraHeaders(context)
        extra.varyByEncoding = vary
        extra.noStore = noStore
        let handle = makeLibmicrohttpdResponse(response, extra: extra)
        defer { MHD_destroy_response(handle) }
        cork(connection, context, bodyBytes: response.body.count)
        return MHD_queue_response(connection, UInt32(response.status), handle)
    }

    /// Queues a prepared response, or its compressed variant (made once, kept beside it), or a `304`:
    /// the body is sent from the shared buffer.
    private func queue(_ prepared: PreparedResponse, on connection: OpaquePointer, context: RequestContext)
        -> MHD_Result
    {
        let (chosen, notModified, vary) = wireRepresentation(
            prepared, context.negotiation, ifNoneMatch: context.ifNoneMatch)
        if let notModified { return queueAsIs(notModified, on: connection, context: context, vary: vary) }
        context.prepared = chosen
        let status = UInt32(chosen.response.status)
        cork(connection, context, bodyBytes: chosen.response.body.count)
        if !context.requestIDWasSent && !isDraining {
            // Nothing of this request's own to add: the shared response, as it is.
            let handle = chosen.sharedLibmicrohttpdResponse(varyByEncoding: vary, noStore: !chosen.hasCacheControl)
            return MHD_queue_response(connection, status, handle)
        }
        var extra = extraHeaders(context)
        extra.varyByEncoding = vary
        extra.noStore = !chosen.hasCacheControl
        let handle = chosen.makeLibmicrohttpdResponse(extra: extra)
        defer { MHD_destroy_response(handle) }
        return MHD_queue_response(connection, status, handle)
    }

    /// Over TLS, corks a small response's records (see `quire_tls_cork`): its header and body leave as one.
    private func cork(_ connection: OpaquePointer, _ context: RequestContext, bodyBytes: Int) {
        guard let tls = context.tls else { return }
        context.isCorked = quire_tls_cork(tls, bodyBytes) == 1
    }

    enum DecodedBody {
        case decoded([UInt8])
        case refused(RequestRejection)
    }

    /// The request body decoded from its `Content-Encoding` (gzip or deflate), the field then removed;
    /// the body limit applies to the decoded size.
    private func decodeBody(_ body: [UInt8], headers: inout RequestFields, declared: Bool) -> DecodedBody {
        guard declared else { return .decoded(body) }  // as the framing scan found: no lookup, no arrays
        let values = headers.values(for: "Content-Encoding")
        let codings = values.flatMap { $0.split(separator: ",") }.map { $0.trimming(" \t") }.filter {
            !$0.isEmpty && $0.lowercased() != "identity"
        }
        headers = headers.removing("Content-Encoding")
        guard let name = codings.first else { return .decoded(body) }
        guard codings.count == 1, let coding = ContentCoding(token: name) else {
            return .refused(.unsupportedContentEncoding(codings.joined(separator: ", ")))
        }
        do throws(InflateStream.Failure) {
            return .decoded(try RequestBodyDecoding.decode(body, coding: coding, limit: configuration.maxBodyBytes))
        } catch .tooLarge {
            return .refused(.payloadTooLarge(limit: configuration.maxBodyBytes))
        } catch {
            return .refused(.malformedContentEncoding(coding))
        }
    }

    private func extraHeaders(_ context: RequestContext) -> ExtraHeaders {
        ExtraHeaders(requestID: context.requestID.text, closing: isDraining || context.closesConnection)
    }

    /// The request's method: one of ``Request/knownMethods`` as it is (nothing decoded, validated or copied per
    /// request: decoding cost ~240 instructions), else decoded.
    private static func methodName(_ method: UnsafePointer<CChar>) -> String {
        knownMethod(method) ?? String(cString: method)
    }

    /// `method` as a literal of ``Request/knownMethods``, or `nil`. A switch rather than a walk over the list,
    /// which cost ~90 instructions more a request (callgrind); `HTTPServerTests` checks that the two agree.
    static func knownMethod(_ method: UnsafePointer<CChar>) -> String? {
        switch UInt8(bitPattern: method[0]) {
        case UInt8(ascii: "G") where strcmp(method, "GET") == 0: "GET"
        case UInt8(ascii: "H") where strcmp(method, "HEAD") == 0: "HEAD"
        case UInt8(ascii: "P") where strcmp(method, "POST") == 0: "POST"
        case UInt8(ascii: "P") where strcmp(method, "PUT") == 0: "PUT"
        case UInt8(ascii: "P") where strcmp(method, "PATCH") == 0: "PATCH"
        case UInt8(ascii: "D") where strcmp(method, "DELETE") == 0: "DELETE"
        case UInt8(ascii: "O") where strcmp(method, "OPTIONS") == 0: "OPTIONS"
        default: nil
        }
    }
}
