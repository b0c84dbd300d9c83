/// An HTTP response: status, header fields and the body's bytes.
///
/// `Content-Length` and `Date` are added by libmicrohttpd; a `HEAD` request gets the headers of the
/// matching `GET` without the body. libmicrohttpd drops header fields with an empty value or a line
/// break.
public struct Response: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The body in parts, some shared with other responses and compressed once (see
    /// ``init(status:headers:parts:)``); `nil` for a body of its own. When set, `body` is their concatenation.
    public var parts: [BodyPart]?

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `text`'s UTF-8 bytes.
    public init(status: Int, headers: HTTPHeaders = [:], text: String) {
        self.init(status: status, headers: headers, body: Array(text.utf8))
    }
}
