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
}

extension RequestRejection {
    /// The codings a request body may be sent in, for `Accept-Encoding` on a `415`.
    public static let acceptedRequestEncodings = "gzip, deflate"
}

extension HTTPResponder {
    /// A minimal RFC 9457 problem document. Responders that own the service's problem types override it.
    public func response(for rejection: RequestRejection) -> Response {
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
        }
        let body = #"{"type":"about:blank","title":"\#(title)","status":\#(status),"detail":"\#(detail)"}"#
        return Response(status: status, headers: headers, text: body)
    }
}
