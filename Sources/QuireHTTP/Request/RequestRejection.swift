/// A request the server refuses before any handler sees it.
public enum RequestRejection: Sendable, Equatable {
    /// The body (declared in `Content-Length`, actually received, or decoded from its `Content-Encoding`)
    /// is over the configured limit.
    case payloadTooLarge(limit: Int)
    /// The body's `Content-Encoding` is not one the server decodes (it decodes gzip and deflate): `415`,
    /// with `Accept-Encoding` naming those (RFC 9110 §15.5.16).
    case unsupportedContentEncoding(String)
    /// The body is not valid data of its `Content-Encoding`: `400`.
    case malformedContentEncoding(ContentCoding)
    /// The request is framed as the RFCs tell a server to refuse (see ``FramingRefusal``): `400`, or `501`
    /// for a transfer coding the server does not know. Refused when the headers have arrived, before any
    /// body byte is read; the connection is closed after the answer, since where the next request would
    /// start is not known.
    case malformedFraming(FramingRefusal)
}

/// Why a request's framing was refused (RFC 9110 §5, RFC 9112 §3.2, §5, §6). Each is a way to smuggle a
/// request past a proxy that frames the bytes differently. The raw value labels the refusal metric.
public enum FramingRefusal: String, Sendable, CaseIterable {
    case duplicateContentLength = "duplicate-content-length"
    case invalidFieldName = "invalid-field-name"
    case invalidFieldValue = "invalid-field-value"
    case obsoleteLineFolding = "obsolete-line-folding"
    case host = "host"
    case contentLengthWithTransferEncoding = "content-length-with-transfer-encoding"
    case invalidTransferEncoding = "invalid-transfer-encoding"
    case unknownTransferCoding = "unknown-transfer-coding"

    /// `501` for a transfer coding the server does not implement (RFC 9112 §6.1), `400` for the rest.
    public var status: Int { self == .unknownTransferCoding ? 501 : 400 }

    public var detail: String {
        switch self {
        case .duplicateContentLength: "Content-Length is given more than once, with different values."
        case .invalidFieldName: "A header field name has whitespace (before the colon too) or a control character."
        case .invalidFieldValue: "A header field value has a control character (NUL, CR or LF included)."
        case .obsoleteLineFolding: "A header field is folded over several lines (obsolete line folding)."
        case .host: "An HTTP/1.1 request needs exactly one Host header field."
        case .contentLengthWithTransferEncoding: "Content-Length and Transfer-Encoding are both given."
        case .invalidTransferEncoding:
            "Transfer-Encoding is given twice, names chunked more than once, or is in an HTTP/1.0 request."
        case .unknownTransferCoding: "The only transfer coding this server implements is chunked."
        }
    }
}

extension RequestRejection {
    /// The codings a request body may be sent in, for `Accept-Encoding` on a `415`.
    public static let acceptedRequestEncodings = "gzip, deflate"
}

extension HTTPResponder {
    /// A minimal RFC 9457 problem document. Responders that own the service's problem types override it.
    public func response(for rejection: RequestRejection, origin: String?) -> Response {
        let (status, title, detail): (Int, String, String)
        var headers: HTTPHeaders = ["Content-Type": "application/problem+json"]
        switch rejection {
        case .payloadTooLarge(let limit):
            (status, title, detail) = (413, "Payload Too Large", "The request body is larger than \(limit) bytes.")
        case .unsupportedContentEncoding:
            (status, title, detail) = (415, "Unsupported Media Type", "The body's Content-Encoding is not supported.")
            headers.add("Accept-Encoding", RequestRejection.acceptedRequestEncodings)
        case .malformedContentEncoding(let coding):
            (status, title, detail) = (400, "Bad Request", "The body is not valid \(coding.rawValue) data.")
        case .malformedFraming(let refusal):
            (status, title, detail) = (
                refusal.status, refusal.status == 501 ? "Not Implemented" : "Bad Request", refusal.detail
            )
        }
        let body = #"{"type":"about:blank","title":"\#(title)","status":\#(status),"detail":"\#(detail)"}"#
        return Response(status: status, headers: headers, text: body)
    }
}
