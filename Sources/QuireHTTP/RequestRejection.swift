/// A request the server refuses before any handler sees it.
public enum RequestRejection: Sendable, Equatable {
    /// The body (declared in `Content-Length`, or actually received) is over the configured limit.
    case payloadTooLarge(limit: Int)
}

extension HTTPResponder {
    /// A minimal RFC 9457 problem document. Responders that own the service's problem types override it.
    public func response(for rejection: RequestRejection) -> Response {
        switch rejection {
        case .payloadTooLarge(let limit):
            let body =
                #"{"type":"about:blank","title":"Payload Too Large","status":413,"#
                + #""detail":"The request body is larger than \#(limit) bytes."}"#
            return Response(status: 413, headers: ["Content-Type": "application/problem+json"], text: body)
        }
    }
}
