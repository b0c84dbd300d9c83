internal import CMicroHTTPD
import Synchronization

/// A response built once and sent many times: its body is copied once, at creation, into memory that
/// libmicrohttpd sends from directly, so queueing it copies no body. For constant answers (`/healthz`)
/// and for cached ones (the same page of the same version).
///
/// `@unchecked Sendable` is safe: the body buffer is written once in `init` and only read afterwards
/// (by libmicrohttpd, from any worker thread), and it is freed in `deinit`, which cannot run while a
/// connection still sends it because every request that queued it keeps the object alive until the
/// request's completion callback. Its other state is immutable, behind a `Mutex`, or atomic (the shared
/// libmicrohttpd responses, which libmicrohttpd itself lets many connections queue at once).
///
/// A compressed variant (gzip, deflate) is made the first time a client asks for it and kept beside the
/// plain one: compressed once, sent many times.
public final class PreparedResponse: @unchecked Sendable {
    /// The response as given.
    public let response: Response
    private let body: UnsafeMutableRawBufferPointer
    /// Whether a compressed representation may be sent (see `HTTPServer.isCompressible`).
    let isCompressible: Bool
    /// The `ETag` of this representation, if any.
    let entityTag: String?
    /// Whether the response says how caches may keep it (else it is sent with `no-store`).
    let hasCacheControl: Bool
    /// The gzip and deflate variants, once made.
    let variants = Mutex<[PreparedResponse?]>([nil, nil])
    /// libmicrohttpd responses of this body with all their header fields, made the first time they are
    /// needed and then queued as they are by any number of connections at once (libmicrohttpd counts
    /// their uses, as the C reference does with its one response): a request that needs no header field
    /// of its own costs no allocation and no header work. One per combination of the fields the server
    /// adds (`Vary`, `Cache-Control: no-store`), as the bit pattern of the pointer (0: not made yet).
    private let shared0 = Atomic<Int>(0)
    private let shared1 = Atomic<Int>(0)
    private let shared2 = Atomic<Int>(0)
    private let shared3 = Atomic<Int>(0)
    /// The same with one recurring set of added fields as well (``AddedFields/recurring``), as the bit pattern of a
    /// retained ``FieldedResponse`` (0: none yet): the first recurring set asked for is kept for the object's life,
    /// never replaced, so that a thread that loaded it can queue it without a lock while another looks.
    private let fielded0 = Atomic<Int>(0)
    private let fielded1 = Atomic<Int>(0)
    private let fielded2 = Atomic<Int>(0)
    private let fielded3 = Atomic<Int>(0)

    public init(_ response: Response) {
        self.response = response
        isCompressible = HTTPServer.isCompressible(response)
        entityTag = response.headers["ETag"]
        hasCacheControl = response.headers.contains("Cache-Control")
        body = .allocate(byteCount: max(response.body.count, 1), alignment: 1)
        response.body.withUnsafeBytes { body.copyMemory(from: $0) }
    }

    deinit {
        for index in 0..<4 {
            let bits = slot(index) { $0.load(ordering: .acquiring) }
            if let handle = OpaquePointer(bitPattern: bits) { MHD_destroy_response(handle) }
            let fielded = fieldedSlot(index) { $0.load(ordering: .acquiring) }
            if let pointer = UnsafeRawPointer(bitPattern: fielded) {
                Unmanaged<FieldedResponse>.fromOpaque(pointer).release()
            }
        }
        body.deallocate()
    }

    private func slot<Result>(_ index: Int, _ body: (borrowing Atomic<Int>) -> Result) -> Result {
        switch index {
        case 0: body(shared0)
        case 1: body(shared1)
        case 2: body(shared2)
        default: body(shared3)
        }
    }

    private func fieldedSlot<Result>(_ index: Int, _ body: (borrowing Atomic<Int>) -> Result) -> Result {
        switch index {
        case 0: body(fielded0)
        case 1: body(fielded1)
        case 2: body(fielded2)
        default: body(fielded3)
        }
    }

    /// The shared libmicrohttpd response with these server-added fields and `added`, when `added` is the recurring
    /// set this object keeps one for (the first it was asked for); `nil` for any other, which needs a response of
    /// its own. This object owns it, as ``sharedLibmicrohttpdResponse(varyByEncoding:noStore:)``'s.
    func sharedLibmicrohttpdResponse(adding added: AddedFields, varyByEncoding: Bool, noStore: Bool) -> OpaquePointer? {
        guard added.recurring else { return nil }
        let index = (varyByEncoding ? 1 : 0) | (noStore ? 2 : 0)
        let bits = fieldedSlot(index) { $0.load(ordering: .acquiring) }
        if let pointer = UnsafeRawPointer(bitPattern: bits) {
            let kept = Unmanaged<FieldedResponse>.fromOpaque(pointer).takeUnretainedValue()
            return kept.fields == added.fields ? kept.handle : nil
        }
        let handle = makeLibmicrohttpdResponse(
            extra: ExtraHeaders(requestID: "", closing: false, varyByEncoding: varyByEncoding, noStore: noStore))
        for field in added.fields { addHeader(field.name, field.value, to: handle) }
        let made = Unmanaged.passRetained(FieldedResponse(fields: added.fields, handle: handle))
        let (exchanged, _) = fieldedSlot(index) {
            $0.compareExchange(
                expected: 0, desired: Int(bitPattern: made.toOpaque()), ordering: .acquiringAndReleasing)
        }
        if exchanged { return handle }
        made.release()  // another thread kept its set first: look again
        return sharedLibmicrohttpdResponse(adding: added, varyByEncoding: varyByEncoding, noStore: noStore)
    }

    /// The shared libmicrohttpd response with these server-added fields (see `shared`); this object owns
    /// it, so a request queueing it must keep this object alive until it completes.
    func sharedLibmicrohttpdResponse(varyByEncoding: Bool, noStore: Bool) -> OpaquePointer {
        let index = (varyByEncoding ? 1 : 0) | (noStore ? 2 : 0)
        let bits = slot(index) { $0.load(ordering: .acquiring) }
        if let handle = OpaquePointer(bitPattern: bits) { return handle }
        let made = makeLibmicrohttpdResponse(
            extra: ExtraHeaders(requestID: "", closing: false, varyByEncoding: varyByEncoding, noStore: noStore))
        let (exchanged, original) = slot(index) {
            $0.compareExchange(expected: 0, desired: Int(bitPattern: made), ordering: .acquiringAndReleasing)
        }
        if exchanged { return made }
        MHD_destroy_response(made)  // another thread made it first
        return OpaquePointer(bitPattern: original)!
    }

    /// A libmicrohttpd response that sends the shared body, with the header fields and `extra` ones.
    func makeLibmicrohttpdResponse(extra: ExtraHeaders) -> OpaquePointer {
        guard
            let handle = MHD_create_response_from_buffer(response.body.count, body.baseAddress, .RESPMEM_PERSISTENT)
        else {
            fatalError("libmicrohttpd could not allocate a response")
        }
        addHeaders(response.headers, to: handle)
        extra.add(to: handle)
        return handle
    }
}

/// A shared libmicrohttpd response with added fields, and the fields, kept by a ``PreparedResponse``.
///
/// `@unchecked Sendable` is safe: both properties are immutable, and libmicrohttpd lets any number of connections
/// queue the response at once (it counts its uses under its own lock), as with the prepared response's other shared
/// responses.
private final class FieldedResponse: @unchecked Sendable {
    let fields: HTTPHeaders
    let handle: OpaquePointer

    init(fields: HTTPHeaders, handle: OpaquePointer) {
        self.fields = fields
        self.handle = handle
    }

    deinit {
        MHD_destroy_response(handle)
    }
}

/// A new libmicrohttpd response with `response`'s body (copied) and header fields.
///
/// libmicrohttpd refuses header fields with an empty value or a line break; those are left out.
func makeLibmicrohttpdResponse(_ response: Response, extra: ExtraHeaders) -> OpaquePointer {
    let handle = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(
            bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let handle else {
        fatalError("libmicrohttpd could not allocate a response of \(response.body.count) bytes")
    }
    addHeaders(response.headers, to: handle)
    extra.add(to: handle)
    return handle
}

private func addHeaders(_ headers: HTTPHeaders, to handle: OpaquePointer) {
    for field in headers {
        addHeader(field.name, field.value, to: handle)
    }
}

/// Adds one header field. `withCString` rather than the implicit conversion: for a short string (most
/// header names) the implicit one copies it to the heap, `withCString` to the stack.
func addHeader(_ name: String, _ value: String, to handle: OpaquePointer) {
    name.withCString { name in
        value.withCString { value in
            _ = MHD_add_response_header(handle, name, value)
        }
    }
}

/// The header fields the server adds to every response of a request: its id, and `Connection: close`
/// while draining. Plain fields, not an ``HTTPHeaders``: nothing to allocate per request.
struct ExtraHeaders {
    var requestID: String
    var closing: Bool
    /// `Vary: Accept-Encoding`: the response has a compressed representation.
    var varyByEncoding = false
    /// `Cache-Control: no-store`: the response says nothing of caches itself.
    var noStore = false
    /// `Content-Encoding` of a body the server encodes as it goes (an event stream).
    var contentEncoding = ContentCoding.identity

    func add(to handle: OpaquePointer) {
        if !requestID.isEmpty { addHeader(RequestIdentifier.header, requestID, to: handle) }
        if closing { _ = MHD_add_response_header(handle, "Connection", "close") }
        if varyByEncoding { _ = MHD_add_response_header(handle, "Vary", "Accept-Encoding") }
        if noStore { _ = MHD_add_response_header(handle, "Cache-Control", "no-store") }
        switch contentEncoding {
        case .identity: break
        case .gzip: _ = MHD_add_response_header(handle, "Content-Encoding", "gzip")
        case .deflate: _ = MHD_add_response_header(handle, "Content-Encoding", "deflate")
        }
    }
}
