internal import CMicroHTTPD

/// A response built once and sent many times: its libmicrohttpd form (body copy and header fields) is
/// made at creation, so queueing it costs no allocation. For constant answers (`/healthz`) and for
/// cached ones (the same page of the same version).
///
/// `@unchecked Sendable` is safe: the libmicrohttpd response is never modified after `init`, and
/// libmicrohttpd reference-counts responses under its own lock, so queueing one response on many
/// connections from many threads at once is supported (`MHD_queue_response` takes a reference, the
/// connection releases it when done); `deinit` drops only this object's reference.
public final class PreparedResponse: @unchecked Sendable {
    /// The response as given, for the rare paths that must change it (a shutdown adds
    /// `Connection: close`).
    public let response: Response
    let handle: OpaquePointer

    public init(_ response: Response) {
        self.response = response
        handle = makeLibmicrohttpdResponse(response, closeConnection: false)
    }

    deinit {
        MHD_destroy_response(handle)
    }
}

/// A new libmicrohttpd response with `response`'s body (copied) and header fields.
///
/// libmicrohttpd refuses header fields with an empty value or a line break; those are left out.
func makeLibmicrohttpdResponse(_ response: Response, closeConnection: Bool) -> OpaquePointer {
    let handle = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(
            bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let handle else {
        fatalError("libmicrohttpd could not allocate a response of \(response.body.count) bytes")
    }
    for field in response.headers {
        _ = MHD_add_response_header(handle, field.name, field.value)
    }
    if closeConnection {
        _ = MHD_add_response_header(handle, "Connection", "close")
    }
    return handle
}
