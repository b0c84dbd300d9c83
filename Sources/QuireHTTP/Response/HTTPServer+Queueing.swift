internal import CMicroHTTPD
internal import CQuireTLS

extension HTTPServer {
    /// Hands `response`, as negotiated for the request (see `wireResponse`), to libmicrohttpd, which copies
    /// the body; adds `X-Request-Id`, and `Connection: close` while draining.
    func queue(_ response: Response, on connection: OpaquePointer, context: ConnectionContext) -> MHD_Result {
        let wire = wireResponse(response, context.negotiation, ifNoneMatch: context.ifNoneMatch)
        return queueAsIs(wire.response, on: connection, context: context, vary: wire.vary, noStore: wire.noStore)
    }

    /// Queues `response` as it is, with the request's own fields and, when asked, `Vary: Accept-Encoding` and
    /// `Cache-Control: no-store`.
    func queueAsIs(
        _ response: Response, on connection: OpaquePointer, context: ConnectionContext, vary: Bool = false,
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
    func queue(_ prepared: PreparedResponse, on connection: OpaquePointer, context: ConnectionContext)
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

    /// Queues a prepared response as above, with `added` fields of this request's own: the shared response kept
    /// with them when they recur (``AddedFields/recurring``), else a libmicrohttpd response of its own that still
    /// sends the shared body.
    func queue(
        _ prepared: PreparedResponse, adding added: AddedFields, on connection: OpaquePointer,
        context: ConnectionContext
    ) -> MHD_Result {
        let (chosen, notModified, vary) = wireRepresentation(
            prepared, context.negotiation, ifNoneMatch: context.ifNoneMatch)
        let fields = added.fields
        if var notModified {
            for field in fields { notModified.headers.add(field.name, field.value) }
            return queueAsIs(notModified, on: connection, context: context, vary: vary)
        }
        context.prepared = chosen
        cork(connection, context, bodyBytes: chosen.response.body.count)
        let status = UInt32(chosen.response.status)
        if !context.requestIDWasSent && !isDraining,
            let handle = chosen.sharedLibmicrohttpdResponse(
                adding: added, varyByEncoding: vary, noStore: !chosen.hasCacheControl)
        {
            return MHD_queue_response(connection, status, handle)
        }
        var extra = extraHeaders(context)
        extra.varyByEncoding = vary
        extra.noStore = !chosen.hasCacheControl
        let handle = chosen.makeLibmicrohttpdResponse(extra: extra)
        defer { MHD_destroy_response(handle) }
        for field in fields { addHeader(field.name, field.value, to: handle) }
        return MHD_queue_response(connection, status, handle)
    }

    /// Over TLS, corks a small response's records (see `quire_tls_cork`): its header and body leave as one.
    func cork(_ connection: OpaquePointer, _ context: ConnectionContext, bodyBytes: Int) {
        guard let tls = context.tls else { return }
        context.isCorked = quire_tls_cork(tls, bodyBytes) == 1
    }

    func extraHeaders(_ context: ConnectionContext) -> ExtraHeaders {
        ExtraHeaders(requestID: context.requestID.text, closing: isDraining || context.closesConnection)
    }
}
