/// An HTTP request as a handler sees it: complete, with its whole body.
public struct Request: Sendable {
    /// The method, as sent (`GET`, `PUT`, …).
    public var method: String
    /// The path, percent-decoded, without the query (`/v1/lists/demo`).
    public var path: String
    /// The query's items, percent-decoded, in order. A key without `=` has the value `""`.
    public var query: RequestFields
    /// The header fields, with case-insensitive lookup.
    public var headers: RequestFields
    /// The body, gathered across libmicrohttpd's calls (empty when there is none).
    public var body: [UInt8]
    /// The request's id: its `X-Request-Id` when it sent a well-formed one, else a generated one. The
    /// server echoes it in the response's `X-Request-Id`.
    public var requestID: String {
        get { identifier.text }
        set { identifier = .given(newValue) }
    }
    /// The id as kept until read (a generated one is formatted when read).
    var identifier: RequestIdentifier.Value
    /// Where the request came from: its connection's peer (``PeerAddress/unknown`` for a request made in code).
    public var peerAddress: PeerAddress

    public init(
        method: String,
        path: String,
        query: [NamedValue] = [],
        headers: HTTPHeaders = [:],
        body: [UInt8] = [],
        requestID: String = "",
        peerAddress: PeerAddress = .unknown
    ) {
        self.init(
            method: method, path: path, query: RequestFields(query: query), headers: RequestFields(headers: headers),
            body: body, identifier: .given(requestID), peerAddress: peerAddress)
    }

    init(
        method: String, path: String, query: RequestFields, headers: RequestFields, body: [UInt8],
        identifier: RequestIdentifier.Value, peerAddress: PeerAddress
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.identifier = identifier
        self.peerAddress = peerAddress
    }

    /// The methods Quire serves. A request's `method` is one of these strings as they are (made once, not
    /// decoded per request); any other method is decoded as sent.
    public static let knownMethods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// The value of the first query item named `name`, or `nil`.
    @_disfavoredOverload
    public func queryValue(_ name: String) -> String? {
        query[name]
    }

    /// The value of the first query item named `name`, a name written in the program (a literal picks this
    /// form: see ``RequestFields/withValue(of:_:)-(StaticString,_)``), or `nil`.
    public func queryValue(_ name: StaticString) -> String? {
        query[name]
    }
}
