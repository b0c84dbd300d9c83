internal import CMicroHTTPD
internal import CQuireFraming
internal import CQuireTLS
import Glibc

// The access handler: a request's way from libmicrohttpd's calls (its headers, its body's chunks, the last call)
// to the responder, and the responder's answer to the connection (queued by `HTTPServer+Queueing.swift`).

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
        let context: ConnectionContext
        if let raw = requestSlot.pointee {
            context = Unmanaged<ConnectionContext>.fromOpaque(raw).takeUnretainedValue()
        } else {  // no request-line callback ran (it always does; kept as a fallback)
            let raw = beginRequest(on: connection)
            requestSlot.pointee = raw
            context = Unmanaged<ConnectionContext>.fromOpaque(raw).takeUnretainedValue()
        }
        if !context.hasHeaders {
            return receiveHeaders(on: connection, version: version, context: context)
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
                refusal(.payloadTooLarge(limit: configuration.maxBodyBytes), on: connection), on: connection,
                context: context)
        }
        switch assembleRequest(url, method, on: connection, context: context) {
        case .request(let request):
            return dispatch(request, on: connection, context: context)
        case .refused(let rejection):
            return queue(refusal(rejection, on: connection), on: connection, context: context)
        }
    }

    /// The access handler's first call: headers only. Refuses a smuggler's framing, and a declared oversized body,
    /// before the body is read, and keeps what the response needs of the fields (the request's id, what it
    /// accepts, its `If-None-Match`).
    @inline(__always)
    private func receiveHeaders(
        on connection: OpaquePointer, version: UnsafePointer<CChar>?, context: ConnectionContext
    ) -> MHD_Result {
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
            let framingRefusal = FramingRefusal(framing)
            countRefusal(framingRefusal)
            return queue(refusal(.malformedFraming(framingRefusal), on: connection), on: connection, context: context)
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
                refusal(.payloadTooLarge(limit: configuration.maxBodyBytes), on: connection), on: connection,
                context: context)
        }
        return .YES
    }

    /// The responder's answer to a request the server refuses itself, given the request's `Origin` (looked up here,
    /// off the way of every accepted request).
    private func refusal(_ rejection: RequestRejection, on connection: OpaquePointer) -> Response {
        let origin = MHD_lookup_connection_value(connection, .HEADER_KIND, "Origin").map { String(cString: $0) }
        return responder.response(for: rejection, origin: origin)
    }

    /// A request as the access handler's last call assembles it, or why its body is refused.
    enum AssembledRequest {
        case request(Request)
        case refused(RequestRejection)
    }

    /// The whole request, once its body is in: its fields and query items (read into the thread's buffer), its
    /// path (the thread's copy when the same), and its body, decoded when it declares a `Content-Encoding`.
    @inline(__always)
    private func assembleRequest(
        _ url: UnsafePointer<CChar>, _ method: UnsafePointer<CChar>, on connection: OpaquePointer,
        context: ConnectionContext
    ) -> AssembledRequest {
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
                return .refused(rejection)
            }
            context.body = []
        }
        return .request(
            Request(
                method: Self.methodName(method),
                path: cache._withUnsafeGuaranteedRef { $0.path(url) },
                query: query,
                headers: headers,
                body: body,
                identifier: context.requestID,
                peerAddress: context.peerAddress
            ))
    }

    /// Hands `request` to the responder and queues what it answers: a response, a prepared one, or (registered
    /// with the server, so that a shutdown ends it) a deferred response or a stream, attached to the connection.
    @inline(__always)
    private func dispatch(_ request: Request, on connection: OpaquePointer, context: ConnectionContext)
        -> MHD_Result
    {
        switch responder.respond(to: request) {
        case .response(let response):
            return queue(response, on: connection, context: context)
        case .prepared(let prepared):
            return queue(prepared, on: connection, context: context)
        case .preparedWithFields(let prepared, let fields):
            return queue(prepared, adding: fields, on: connection, context: context)
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
        into context: ConnectionContext
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

    /// The request's method: one of ``Request/knownMethods`` as it is (nothing decoded, validated or copied per
    /// request), else decoded.
    private static func methodName(_ method: UnsafePointer<CChar>) -> String {
        knownMethod(method) ?? String(cString: method)
    }

    /// `method` as a literal of ``Request/knownMethods``, or `nil`. A switch rather than a walk over the list, which
    /// would compare the method with each name in turn on every request; `HTTPServerTests` checks that the two
    /// agree.
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
