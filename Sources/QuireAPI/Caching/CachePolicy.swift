import QuireHTTP

/// `Cache-Control` of every response, decided here by route kind (openapi.yaml) and nowhere else:
///
/// | route kind | successful answer | why |
/// | --- | --- | --- |
/// | stateless pages, `GET /v1/lists` | `no-cache` (or `max-age=N, stale-while-revalidate=M`) + `ETag` | live data: a cache keeps it but asks first |
/// | `GET /openapi.yaml` | `max-age=N` + `ETag` | changes only with a deployment |
/// | `GET /client/*` (quire.js, the demo's script and style) | `max-age=86400` + `ETag` | changes only with a deployment; the demo page names them with `?v=<tag>` |
/// | `GET /demo` | `no-cache` + `ETag` | the page that names the assets' versions: always revalidated |
/// | everything else: sessions, answers, streams, writes, `/healthz`, `/readyz`, `/metrics`, errors | `no-store` | private to one client, or a moment's state |
///
/// The router applies it to every response a route returns; prepared responses (pages, the spec) carry
/// it from their construction (``headerValue(for:)``); and anything answered outside the router (a
/// rejection, a long poll resumed later) gets `no-store` from ``HTTPServer`` when it has no policy.
public struct CachePolicy: Sendable, Equatable {
    /// Seconds a cache may serve a page or the list index without asking (`max-age`); 0 sends
    /// `no-cache`: always revalidated, with the `ETag`. Default 0.
    public var listMaxAge = 0
    /// Seconds past `max-age` a cache (a CDN) may serve a stale page while it revalidates
    /// (`stale-while-revalidate`); only with a `max-age`. Default 0.
    public var listStaleWhileRevalidate = 0
    /// Seconds `/openapi.yaml` may be served from a cache (`max-age`). Default 300.
    public var documentMaxAge = 300
    /// Seconds the web client and the demo's assets may be served from a cache (`max-age`). Default 86400.
    public var assetMaxAge = 86400

    public init() {}

    /// What a route's answers are, for caches.
    public enum Kind: Sendable {
        /// Cacheable, revalidated: stateless pages and the list index.
        case revalidated
        /// Cacheable for `documentMaxAge`, with validators: the OpenAPI document.
        case document
        /// Cacheable for `assetMaxAge`, with validators: `quire.js` and the demo page's script and style.
        case asset
        /// Cacheable, always revalidated: the demo page.
        case page
        /// Never stored.
        case noStore
    }

    /// The kind of the route `pattern` for `method`.
    public static func kind(method: String, route pattern: String) -> Kind {
        guard method == "GET" || method == "HEAD" else { return .noStore }
        switch pattern {
        case "/v1/lists", "/v1/lists/{list}": return .revalidated
        case "/openapi.yaml": return .document
        case "/demo": return .page
        case _ where pattern.hasPrefix("/client/"): return .asset  // every static asset StaticFiles serves
        default: return .noStore
        }
    }

    /// The `Cache-Control` value of a successful answer of `kind`.
    public func headerValue(for kind: Kind) -> String {
        switch kind {
        case .revalidated:
            guard listMaxAge > 0 else { return "no-cache" }
            let stale = listStaleWhileRevalidate > 0 ? ", stale-while-revalidate=\(listStaleWhileRevalidate)" : ""
            return "max-age=\(listMaxAge)\(stale)"
        case .document:
            return "max-age=\(documentMaxAge)"
        case .asset:
            return "max-age=\(assetMaxAge)"
        case .page:
            return "no-cache"
        case .noStore:
            return "no-store"
        }
    }

    /// The value for a response of `status` to `method` on `pattern`: only successful reads (`200`,
    /// `304`) are cacheable; an error (a `404` is cacheable by default) is `no-store`.
    func headerValue(method: String, route pattern: String, status: Int) -> String {
        guard status == 200 || status == 304 else { return "no-store" }
        return headerValue(for: Self.kind(method: method, route: pattern))
    }

    /// A strong entity tag for `bytes`: `"h-<64-bit FNV-1a, hex>"`, for responses without a version.
    static func entityTag(of bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return "\"h-\(String(hash, radix: 16))\""
    }

    /// `response` with its `Cache-Control` (kept when the route set one).
    func apply(to response: Response, method: String, route pattern: String) -> Response {
        guard !response.headers.contains("Cache-Control") else { return response }
        var response = response
        response.headers.add(
            "Cache-Control", headerValue(method: method, route: pattern, status: response.status))
        return response
    }
}
