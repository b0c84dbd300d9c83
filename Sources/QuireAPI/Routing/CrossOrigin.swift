import QuireHTTP

/// Cross-origin resource sharing (the Fetch standard's CORS protocol) for the origins of `server.cors.allowedOrigins`:
/// the one place that decides which CORS fields a response carries. The router asks it only when origins are
/// configured, so that a service without them pays one `nil` check per request.
///
/// - A **preflight** (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from an allowed origin is
///   answered `204` with the methods and request fields the API takes, and how long the browser may keep that.
/// - Every other response to an allowed origin names it in `Access-Control-Allow-Origin` and lists the response
///   fields a client reads (``exposedFields``).
/// - A request from any other origin gets no CORS field, so its browser keeps the response from the page; a
///   preflight from it is routed as any `OPTIONS` (`405 method-not-allowed`).
///
/// No credentials: tokens travel in `Authorization`, which a page sets itself, never in cookies, so
/// `Access-Control-Allow-Credentials` is never sent and a page's request carries no cookie of the service.
final class CrossOrigin: Sendable {
    /// The origins allowed, as their exact bytes (browsers send an origin in lower case).
    private let origins: Set<String>
    /// `*` was configured: every origin may call, and the answers do not depend on which one does.
    private let anyOrigin: Bool
    /// The fields of an answer to an allowed origin, made once per origin (the set is fixed).
    private let fieldsByOrigin: [String: HTTPHeaders]
    /// `Vary: Origin` alone: what an answer to no origin, or to another one, carries when the answer depends on the
    /// origin, so that a shared cache keeps the two apart.
    private let varyOnly: HTTPHeaders
    private let preflightByOrigin: [String: Response]

    /// The methods the API answers.
    static let allowedMethods = "GET, HEAD, POST, PUT, DELETE"
    /// The request fields the API reads that are not CORS-safelisted.
    static let allowedFields =
        "Authorization, Content-Type, Content-Encoding, If-Match, If-None-Match, Last-Event-ID, X-Request-Id, "
        + "traceparent, tracestate"
    /// The response fields a client reads beyond the CORS-safelisted ones (`Content-Type`, `Cache-Control`, …).
    static let exposedFields =
        "ETag, Link, Location, Retry-After, RateLimit, RateLimit-Policy, WWW-Authenticate, Allow, X-Request-Id"

    init(_ settings: QuireService.CrossOriginSettings) {
        anyOrigin = settings.allowedOrigins.contains("*")
        origins = Set(settings.allowedOrigins.filter { $0 != "*" })
        varyOnly = anyOrigin ? [:] : ["Vary": "Origin"]
        var fields: [String: HTTPHeaders] = [:]
        var preflights: [String: Response] = [:]
        for origin in origins.union(anyOrigin ? ["*"] : []) {
            var answer: HTTPHeaders = ["Access-Control-Allow-Origin": origin]
            if !anyOrigin { answer.add("Vary", "Origin") }
            var preflight = answer
            answer.add("Access-Control-Expose-Headers", Self.exposedFields)
            fields[origin] = answer
            preflight.add("Access-Control-Allow-Methods", Self.allowedMethods)
            preflight.add("Access-Control-Allow-Headers", Self.allowedFields)
            preflight.add("Access-Control-Max-Age", String(settings.maxAgeSeconds))
            preflight.add("Cache-Control", "no-store")
            preflights[origin] = Response(status: 204, headers: preflight)
        }
        fieldsByOrigin = fields
        preflightByOrigin = preflights
    }

    /// The key of the request's origin among the allowed ones (`*` for any), or `nil`.
    private func allowedKey(_ origin: String) -> String? {
        if anyOrigin { return "*" }
        return origins.contains(origin) ? origin : nil
    }

    /// The answer to a preflight from an allowed origin, or `nil` when `request` is not one (routed as usual).
    func preflight(_ request: Request) -> Response? {
        guard request.method == "OPTIONS", request.headers.contains("Access-Control-Request-Method"),
            let origin = request.headers["Origin"], let key = allowedKey(origin)
        else { return nil }
        return preflightByOrigin[key]
    }

    /// The CORS fields of the answer to `request`: those of its origin when allowed, else `Vary: Origin` alone.
    func fields(for request: Request) -> HTTPHeaders {
        fields(origin: request.headers["Origin"])
    }

    /// The CORS fields of an answer to a request from `origin` (`nil`: it sent none).
    func fields(origin: String?) -> HTTPHeaders {
        guard let origin, let key = allowedKey(origin), let fields = fieldsByOrigin[key] else { return varyOnly }
        return fields
    }
}
