internal import CQuireTLS

/// What a connection keeps across its requests (its socket and TLS state), and what the request under way carries
/// between libmicrohttpd's calls. What helps the next request, whichever connection it comes from, is kept by the
/// thread instead (``ThreadRequestCache``).
///
/// One per connection, made when libmicrohttpd announces the connection and kept in its socket context until
/// it closes (a retained reference); each request borrows it through its `void **` slot, from its request line to
/// the completion callback, which clears the request's state for the connection's next request (`reset()`). A
/// request costs no object of its own: allocating, filling and freeing one per request would be a fixed cost of
/// every request.
final class ConnectionContext {
    /// The connection's socket, or -1.
    let socket: Int32
    /// The connection's peer, read once when the connection is announced.
    let peerAddress: PeerAddress
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
    /// (`hasContentEncoding`): the chunks are appended in place, so every access to it is checked for exclusivity
    /// at run time (`swift_beginAccess`), which a request without a body should not pay.
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
        peerAddress = PeerAddress.of(socket: socket)
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
