public import Logging
public import QuireAuth
public import QuireCore
public import QuireHTTP
public import QuireSources
import Synchronization

/// The Quire HTTP service: every route of openapi.yaml over one ``HTTPServer``.
///
/// Built once at start-up; its responder is immutable and shared by libmicrohttpd's threads. Start-up
/// order: the server answers `/healthz` at once and `/readyz` with `503` until ``load()`` has loaded the
/// stored lists.
public final class QuireService: Sendable {
    public let server: HTTPServer
    /// The listener of `/metrics` alone (`server.metricsListener`), `nil` when none is configured.
    public let metricsServer: HTTPServer?
    public let readiness: Readiness
    public let router: RouterResponder
    public let registry: ListRegistry
    let context: APIContext
    /// The followers of the configured sources, started by ``load()``.
    public var followers: [SourceFollower] { context.writes.followers.withLock { $0 } }
    /// Every `(method, pattern)` the service answers, for the OpenAPI check.
    public let routes: [(method: String, pattern: String)]

    /// - Parameters:
    ///   - store: where lists are kept durably (``InMemoryListStore`` keeps nothing).
    ///   - keys: the keys of JSON Web Tokens, loaded from `configuration.jwt` by ``TokenKeys/load(_:)``.
    ///   - accessLog: where the access log goes when `configuration.accessLog` is on; by default `logger`
    ///     (``LoggerAccessLog``). `quire serve` gives a ``BufferedAccessLog``.
    ///   - rateLimitClock: the monotonic time rate-limit buckets refill by; tests move one by hand.
    /// - Precondition: `keys` are given when `configuration.jwt` is enabled.
    public init(
        configuration: Configuration, logger: Logger, store: any ListStore = InMemoryListStore(),
        keys: TokenKeys? = nil, accessLog: (any AccessLog)? = nil, rateLimitClock: RateLimitClock = .monotonic
    ) {
        precondition(
            keys != nil || !configuration.jwt.isEnabled, "JWT is configured: load its keys with TokenKeys.load first")
        let readiness = Readiness()
        let metrics = ServiceMetrics(
            accessLog: configuration.accessLog ? accessLog ?? LoggerAccessLog(logger: logger) : nil)
        let registry = ListRegistry(
            store: TimedListStore(base: store, timer: metrics.storeWrites, commits: metrics.storeCommits),
            limits: configuration.limits,
            memoryBudget: configuration.lists.memoryBytes,
            idleTimeout: configuration.lists.idleSeconds > 0
                ? .milliseconds(Int64((configuration.lists.idleSeconds * 1000).rounded())) : nil)
        registry.observeLoads { [metrics] in metrics.listLoaded(in: $0) }
        let context = APIContext(
            registry: registry, configuration: configuration, keys: keys ?? .none, logger: logger, metrics: metrics,
            readiness: readiness, rateLimitClock: rateLimitClock)
        var router = Router()
        OperationsRoutes.add(
            to: &router, readiness: readiness, replication: registry.replication, cachePolicy: configuration.cache,
            demoPage: configuration.demo.page)
        context.addRoutes(to: &router)
        self.readiness = readiness
        self.registry = registry
        self.context = context
        let metricsAccess = configuration.metrics.access
        router.on("GET", "/metrics") { request, _ in try context.metrics(request, access: metricsAccess) }
        self.routes = router.routeList
        self.router = router.buildResponder(
            logger: logger, observer: metrics, access: context.access, cachePolicy: configuration.cache,
            limiter: context.rateLimiter,
            crossOrigin: configuration.crossOrigin.allowedOrigins.isEmpty
                ? nil : CrossOrigin(configuration.crossOrigin))
        self.server = HTTPServer(configuration: configuration.http, logger: logger, responder: self.router)
        metricsServer = configuration.metrics.listener.map {
            Self.metricsServer(
                $0, access: configuration.metrics.listenerAccess, context: context, readiness: readiness, logger: logger
            )
        }
        metrics.watch(server)
    }

    /// The listener of `/metrics`, `/healthz` and `/readyz` alone (`server.metricsListener`): no product route, no
    /// static file, no observer (its requests are neither logged nor counted, so that its `/metrics` series never
    /// meet those of the service's own listener).
    private static func metricsServer(
        _ http: HTTPServer.Configuration, access: MetricsAccess, context: APIContext, readiness: Readiness,
        logger: Logger
    ) -> HTTPServer {
        var router = Router()
        OperationsRoutes.addProbes(to: &router, readiness: readiness, replication: context.registry.replication)
        router.on("GET", "/metrics") { request, _ in try context.metrics(request, access: access) }
        var logger = logger
        logger[metadataKey: "listener"] = "metrics"
        return HTTPServer(
            configuration: http, logger: logger,
            responder: router.buildResponder(logger: logger, cachePolicy: context.configuration.cache))
    }

    /// Replaces the keys of JSON Web Tokens (SIGHUP re-reads the JWKS file): tokens of removed keys stop
    /// working at once, tokens of new keys work; nothing restarts. Does nothing without JWT configured.
    public func replaceTokenKeys(_ keys: TokenKeys) {
        context.access.verifier?.replaceKeys(keys)
    }

    /// Starts listening: `/healthz` answers from now on, `/readyz` and the product routes (`/v1`, `503
    /// overloaded` until then) once ``load()`` is done.
    public func start() throws(HTTPServerError) {
        try server.start()
        try metricsServer?.start()
    }

    /// Seeds the demo list when configured, and turns ready. No list is read: each is loaded from the store when
    /// a request first needs it.
    public func load() throws {
        if context.configuration.demo.seed {
            try DemoData.seedIfMissing(registry)
        }
        context.startMaintenance()
        context.startFollowers()
        readiness.set(.ready)
    }

    /// Starts and loads: what a test or a simple embedding wants.
    public func startAndLoad() throws {
        try start()
        try load()
    }

    /// Graceful shutdown: `/readyz` answers `503`, waiting long polls are answered, in-flight requests
    /// finish, then the server stops.
    public func shutdown() {
        context.stopFollowers()  // a transaction being committed is committed; nothing after it is read
        context.shutdown()  // first: once /readyz says draining, new writes are refused
        readiness.set(.draining)
        server.shutdown()
        metricsServer?.shutdown()  // last: Prometheus sees the drain until the end
        // A write whose client went away is no longer the server's to wait for; its commit still ends before
        // the caller closes the store.
        context.waitUntilStoreIdle()
    }
}

extension QuireService {
    /// Everything the service is configured with.
    public struct Configuration: Sendable, Equatable {
        public var http = HTTPServer.Configuration()
        /// The token producers send as `Authorization: Bearer <token>`; `nil` leaves writes open.
        public var writeToken: String?
        /// The token every other `/v1` request must carry (or the write token); `nil` leaves reads open.
        public var readToken: String?
        /// JSON Web Tokens (`auth.jwt.*`); when enabled, every `/v1` request needs a token.
        public var jwt = TokenSettings()
        /// Write one access-log line per request (at `info`).
        public var accessLog = true
        /// Limits every list write is validated against.
        public var limits = ListLimits()
        public var pages = PageSettings()
        public var sessions = SessionSettings()
        public var longPolls = LongPollSettings()
        public var events = EventSettings()
        public var demo = DemoSettings()
        /// The lists held in memory (`lists.*`).
        public var lists = ListSettings()
        /// This instance's tag in session ids (`cluster.instance`), so that a load balancer can route every
        /// request of a session to it; `nil` for a single instance.
        public var instance: String?
        /// `Cache-Control` of pages, the list index and the OpenAPI document (`cache.*`).
        public var cache = CachePolicy()
        /// Tables of the app's own PostgreSQL whose rows the service keeps as lists (`sources:`, API.md §2b), each
        /// checked against its database before the service starts (``SourceFollower/refusals(of:limits:)``).
        public var sources: [SourceConfiguration] = []
        /// Token buckets per client (`rateLimits.*`, API.md §6c); off by default.
        public var rateLimits = RateLimitSettings()
        /// Who may scrape `/metrics`, and a listener of its own for it (`auth.metricsToken`,
        /// `server.metricsListener.*`).
        public var metrics = MetricsSettings()
        /// The origins whose web pages may call the service (`server.cors.*`); none by default.
        public var crossOrigin = CrossOriginSettings()

        public init() {}
    }
}
