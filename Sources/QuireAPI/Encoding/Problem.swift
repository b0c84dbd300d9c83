public import QuireHTTP

/// An error that answers HTTP: an RFC 9457 problem document (`application/problem+json`).
///
/// Every problem type of openapi.yaml is a static member; the `type` URI of each is stable and documented
/// in the OpenAPI spec. Extension members (`version`, `path`, `opIndex`, …) and extra headers (`Allow`,
/// `Retry-After`, `WWW-Authenticate`) travel with the problem.
public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
    public let kind: Kind
    public let detail: String
    public let extensions: [Extension]
    public let headers: HTTPHeaders

    public init(_ kind: Kind, detail: String, extensions: [Extension] = [], headers: HTTPHeaders = [:]) {
        self.kind = kind
        self.detail = detail
        self.extensions = extensions
        self.headers = headers
    }

    public var status: Int { kind.status }

    public var description: String { "\(kind.slug) (\(kind.status)): \(detail)" }

    /// The problem document's bytes.
    public var documentBody: [UInt8] {
        var writer = JSONObjectWriter()
        writer.field("type", Kind.typeBase + kind.slug)
        writer.field("title", kind.title)
        writer.field("status", kind.status)
        writer.field("detail", detail)
        for member in extensions {
            switch member.value {
            case .string(let value): writer.field(member.name, value)
            case .int(let value): writer.field(member.name, value)
            case .strings(let values): writer.field(member.name, values)
            }
        }
        return writer.finish()
    }

    /// The problem as a response.
    public var response: Response {
        var headers = self.headers
        headers.add("Content-Type", "application/problem+json")
        return Response(status: status, headers: headers, body: documentBody)
    }
}

extension Problem {
    /// An extension member of a problem document.
    public struct Extension: Sendable, Equatable {
        public enum Value: Sendable, Equatable {
            case string(String)
            case int(Int)
            case strings([String])
        }

        public let name: String
        public let value: Value

        public init(_ name: String, _ value: Value) {
            self.name = name
            self.value = value
        }
    }

    /// A problem type: its URI's last segment, its title and its status.
    public struct Kind: Sendable, Equatable, Hashable {
        public let slug: String
        public let title: String
        public let status: Int

        /// Every problem type URI is this base followed by the slug.
        public static let typeBase = "https://quire.dev/problems/"

        public static let invalidJSON = Kind(slug: "invalid-json", title: "Malformed JSON", status: 400)
        public static let invalidRequest = Kind(slug: "invalid-request", title: "Invalid request", status: 400)
        public static let invalidCursor = Kind(slug: "invalid-cursor", title: "Invalid cursor", status: 400)
        public static let invalidFilter = Kind(slug: "invalid-filter", title: "Invalid filter", status: 400)
        public static let unauthorized = Kind(slug: "unauthorized", title: "Unauthorized", status: 401)
        public static let forbidden = Kind(slug: "forbidden", title: "Forbidden", status: 403)
        public static let notFound = Kind(slug: "not-found", title: "Not found", status: 404)
        public static let listNotFound = Kind(slug: "list-not-found", title: "List not found", status: 404)
        public static let sessionNotFound = Kind(slug: "session-not-found", title: "Session not found", status: 404)
        public static let methodNotAllowed = Kind(
            slug: "method-not-allowed", title: "Method not allowed", status: 405)
        public static let sinceMismatch = Kind(slug: "since-mismatch", title: "Version mismatch", status: 409)
        public static let listFromSource = Kind(slug: "list-from-source", title: "List kept from a source", status: 409)
        public static let versionMismatch = Kind(
            slug: "version-mismatch", title: "Precondition failed", status: 412)
        public static let payloadTooLarge = Kind(slug: "payload-too-large", title: "Payload too large", status: 413)
        public static let unsupportedMediaType = Kind(
            slug: "unsupported-media-type", title: "Unsupported media type", status: 415)
        public static let invalidList = Kind(slug: "invalid-list", title: "Invalid list", status: 422)
        public static let invalidOp = Kind(slug: "invalid-op", title: "Invalid operation", status: 422)
        public static let rateLimited = Kind(slug: "rate-limited", title: "Too many requests", status: 429)
        public static let `internal` = Kind(slug: "internal", title: "Internal error", status: 500)
        public static let overloaded = Kind(slug: "overloaded", title: "Service unavailable", status: 503)
        public static let sourceSyncing = Kind(slug: "source-syncing", title: "Source syncing", status: 503)
        public static let notImplemented = Kind(slug: "not-implemented", title: "Not implemented", status: 501)

        /// Every problem type, for documentation and tests.
        public static let all: [Kind] = [
            invalidJSON, invalidRequest, invalidCursor, invalidFilter, unauthorized, forbidden, notFound, listNotFound,
            sessionNotFound,
            methodNotAllowed, sinceMismatch, listFromSource, versionMismatch, payloadTooLarge, unsupportedMediaType,
            invalidList, invalidOp, rateLimited, .internal, overloaded, sourceSyncing, notImplemented,
        ]
    }
}

extension Problem {
    public static func notFound(_ path: String) -> Problem {
        Problem(.notFound, detail: "No resource at \(path).")
    }

    /// `405`, with the `Allow` header listing `allowed`.
    public static func methodNotAllowed(_ method: String, allowed: [String]) -> Problem {
        Problem(
            .methodNotAllowed,
            detail: "\(method) is not allowed here; allowed: \(allowed.joined(separator: ", ")).",
            headers: ["Allow": allowed.joined(separator: ", ")]
        )
    }

    public static func payloadTooLarge(limit: Int) -> Problem {
        Problem(
            .payloadTooLarge, detail: "The request body is larger than \(limit) bytes.",
            extensions: [Extension("limit", .int(limit))])
    }

    /// Whether a write answered `503` changed the list: the `written` member, so that a producer tells a write
    /// to send again as it is from one whose outcome it must read first, without parsing the detail.
    public enum Written: String, Sendable {
        /// Nothing was changed: the write can be sent again as it is.
        case no
        /// The database stopped answering while committing: the write may have been made. Read the list's
        /// version before writing again.
        case unknown
    }

    /// `503` with `Retry-After`; answering a write, with its `written` member.
    public static func overloaded(_ detail: String, retryAfterSeconds: Int, written: Written? = nil) -> Problem {
        Problem(
            .overloaded, detail: detail, extensions: written.map { [Extension("written", .string($0.rawValue))] } ?? [],
            headers: ["Retry-After": "\(retryAfterSeconds)"])
    }

    /// `500`: the detail names the request id under which the cause was logged.
    public static func `internal`(requestID: String) -> Problem {
        Problem(
            .internal, detail: "An unexpected error occurred; it was logged with request id \(requestID).",
            extensions: [Extension("requestId", .string(requestID))])
    }
}

extension Problem {
    /// `response` with its problem document naming `trace` in a `traceId` member, for a `5xx`: the person who
    /// reads the client's report finds the request in the proxy's log and Quire's by it. Any other response is
    /// returned as it is. The member goes before the document's closing brace: the document is made already, and
    /// a `5xx` is rare enough that the copy costs nothing that matters.
    static func naming(_ trace: TraceID, in response: Response) -> Response {
        guard !trace.isNone, response.headers["Content-Type"] == "application/problem+json",
            response.body.last == UInt8(ascii: "}"), response.body.count > 2
        else { return response }
        var traced = response
        traced.body.removeLast()
        traced.body += #","traceId":""#.utf8
        traced.body += trace.text.utf8
        traced.body += #""}"#.utf8
        return traced
    }
}
