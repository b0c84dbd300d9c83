public import QuireHTTP

/// Settings of the product API, with their defaults.
extension QuireService {
    public struct PageSettings: Sendable, Equatable {
        /// Items in a page when the request names no `limit` (default 50).
        public var defaultLimit = 50
        /// The largest `limit` accepted (default 500).
        public var maxLimit = 500
        /// Stateless pages kept ready to send, the most recently used (default 1024).
        public var cacheEntries = 1024
        public init() {}
    }

    public struct SessionSettings: Sendable, Equatable {
        /// Sessions kept; past it the least recently used is evicted (default 200,000).
        public var capacity = 200_000
        /// Seconds a session may go unused before it expires (default 1800).
        public var idleSeconds: Double = 1800
        /// Changes larger than this share of the window are sent as a reset (default 0.5).
        public var resetShare = 0.5
        /// The largest `keep` a session may ask for, and the bound of sessions that ask for none (0: none).
        public var maxKeep = 0
        public init() {}
    }

    public struct LongPollSettings: Sendable, Equatable {
        /// The longest `wait` honoured, in seconds (default 60).
        public var maxWaitSeconds: Double = 60
        /// Requests waiting at once; more get 503 (default 10,000).
        public var maxWaiters = 10_000
        public init() {}
    }

    public struct EventSettings: Sendable, Equatable {
        /// Event streams open at once; more get 503 (default 10,000).
        public var maxStreams = 10_000
        /// Seconds between the comment lines that keep an idle stream open through proxies (default 15).
        public var heartbeatSeconds: Double = 15
        public init() {}
    }

    public struct ListSettings: Sendable, Equatable {
        /// Estimated bytes of the lists held in memory past which the least recently used lists that no session
        /// holds leave memory (loaded again when next needed); 0: no bound (default 512 MiB).
        public var memoryBytes = 512 << 20
        /// Seconds a list may go without a read or a write while no session holds it before it leaves memory,
        /// whatever the budget (in a cluster partitioned by list, the instance a list moved away from lets it go);
        /// 0: never (default 300).
        public var idleSeconds: Double = 300
        public init() {}
    }

    public struct DemoSettings: Sendable, Equatable {
        /// Seed a `demo` list at start when no list of that name exists (default true).
        public var seed = true
        /// Change the demo list every `intervalSeconds` (default false).
        public var live = false
        /// Seconds between live changes (default 3).
        public var intervalSeconds: Double = 3
        /// Serve the demo page, `/demo`, and its script and style sheet (default true). `quire serve` turns it off
        /// with the demo list on a non-loopback address (docs/operations.md, "Public deployment").
        public var page = true
        public init() {}
    }

    /// Who may read `GET /metrics` on a listener (API.md §6).
    public enum MetricsAccess: Sendable, Equatable {
        /// Anyone: a loopback address, or a listener of its own inside the network.
        case open
        /// Only a request with `Authorization: Bearer <token>` (`auth.metricsToken`); others get `401 unauthorized`.
        case token(String)
        /// No request: a non-loopback address without a metrics token. Every request gets `401 unauthorized`,
        /// whose detail says how to scrape instead.
        case refused
    }

    public struct MetricsSettings: Sendable, Equatable {
        /// Who may read `/metrics` on the service's own listener (default: anyone).
        public var access = MetricsAccess.open
        /// A listener of its own (`server.metricsListener`) that serves `/metrics`, `/healthz` and `/readyz` only,
        /// for Prometheus inside the network; `nil`: none (default).
        public var listener: HTTPServer.Configuration?
        /// Who may read `/metrics` on that listener (default: anyone).
        public var listenerAccess = MetricsAccess.open
        public init() {}
    }

    /// Cross-origin requests from web apps (`server.cors.*`): see ``CrossOrigin``.
    public struct CrossOriginSettings: Sendable, Equatable {
        /// The origins (`https://app.example.com`, lower case, no path) whose pages may call the service, or `*`
        /// for every origin; empty: no CORS field is ever sent (default).
        public var allowedOrigins: [String] = []
        /// Seconds a browser may keep a preflight's answer (`Access-Control-Max-Age`, default 7200: Chromium's
        /// cap).
        public var maxAgeSeconds = 7200
        public init() {}
    }
}
