import Logging
import QuireAuth
import QuireCore
import QuireHTTP
import Synchronization

/// What every product route shares: the lists, the sessions, the waiting long polls, the page cache
/// and the settings. Immutable itself; each part guards its own state.
final class APIContext: Sendable {
    let registry: ListRegistry
    let sessions: SessionStore
    /// Answers shared by the sessions that hold the same window.
    let sharedAnswers = SharedAnswers()
    /// Where the write routes run (off libmicrohttpd's threads).
    let storeWrites = StoreWrites()
    /// The lists' filtered views (API.md §4d), shared by the sessions and pages with the same filter.
    let views = ListViews()
    let longPolls: LongPolls
    /// Open event streams (API.md §4c), one per session.
    let streams: EventStreams
    let pageCache: PageCache<PageQuery, ListResponse>
    /// The first windows of new sessions at a list's head: cut once for every session opened on the same
    /// page of the same version, and their bodies (without what is the session's own) encoded and compressed
    /// once. Each entry keeps its version alive, so the cache is small: the heads clients open sessions at.
    let sessionFirstWindows: PageCache<FirstWindowKey, FirstWindow>
    /// "Nothing new" answers, prepared once per session state (at most 10,000 sessions', about 1 KB each).
    let unchangedAnswers: PageCache<UnchangedAnswerKey, ListResponse>
    let configuration: QuireService.Configuration
    /// Admits callers to the product routes: static tokens, JSON Web Tokens, scopes, session subjects.
    let access: AccessControl
    let logger: Logger
    let serviceMetrics: ServiceMetrics
    /// Whether the housekeeping thread runs (see `startMaintenance()`).
    let maintenanceRunning = Atomic<Bool>(false)
    /// Set by ``shutdown()``: no session opens any more (it would end with the process at once).
    private let stopping = Atomic<Bool>(false)
    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    init(
        registry: ListRegistry, configuration: QuireService.Configuration, keys: TokenKeys, logger: Logger,
        metrics: ServiceMetrics, readiness: Readiness
    ) {
        self.registry = registry
        serviceMetrics = metrics
        self.configuration = configuration
        self.logger = logger
        sessions = SessionStore(
            capacity: configuration.sessions.capacity, idleSeconds: configuration.sessions.idleSeconds,
            pins: registry.pins)
        longPolls = LongPolls(capacity: configuration.longPolls.maxWaiters)
        streams = EventStreams(
            capacity: configuration.events.maxStreams, heartbeatSeconds: configuration.events.heartbeatSeconds,
            sessions: sessions)
        pageCache = PageCache(capacity: configuration.pages.cacheEntries)
        sessionFirstWindows = PageCache(capacity: min(configuration.pages.cacheEntries, 64))
        unchangedAnswers = PageCache(capacity: min(configuration.sessions.capacity, 10_000))
        access = AccessControl(
            writeToken: configuration.writeToken, readToken: configuration.readToken,
            verifier: configuration.jwt.isEnabled ? TokenVerifier(settings: configuration.jwt, keys: keys) : nil,
            sessions: sessions, readiness: readiness, denied: { [metrics] in metrics.denied($0) })
        registry.observe { [longPolls, sessions, streams, registry, views] list, version in
            // A delete is told after the list's lock is released (a change feed tells a whole batch at the end):
            // when the list was created again meanwhile, the sessions opened on it since are not the deleted
            // list's to end (those older than the delete follow the new list, as a replacement of its sections).
            if version == nil, !registry.contains(list) {
                sessions.removeAll(of: list)
                streams.endAll(of: list)
                for view in views.listChanged(list, to: nil) {
                    streams.endAll(of: view)
                    longPolls.notify(view)
                }
            } else {
                streams.notify(list)
                // The views follow the list's current version (observers may be told of two writes out of order).
                for view in views.listChanged(list, to: registry.version(of: list) ?? version) {
                    streams.notify(view)
                    longPolls.notify(view)
                }
            }
            longPolls.notify(list)
        }
    }

    /// Adds every route of API.md §2–§4, each with the access it needs (checked by ``AccessControl``
    /// before the handler runs).
    func addRoutes(to router: inout Router) {
        router.on("GET", "/v1/lists", access: .listIndex) { [self] in try listIndex($0, $2) }
        // Writes wait on the store off libmicrohttpd's threads but for a lone one on a local disk (see made(_:)): a
        // commit waiting on the store must not hold up the other connections of its worker thread.
        router.on("PUT", "/v1/lists/{list}", access: .writeList) { [self] request, parameters, _ in
            try made(putList(request, parameters))
        }
        router.on("GET", "/v1/lists/{list}", access: .readList) { [self] request, parameters, _ in
            try page(request, parameters)
        }
        router.on("DELETE", "/v1/lists/{list}", access: .writeList) { [self] request, parameters, _ in
            let (name, ifMatch) = try deleteList(request, parameters)
            return try offloaded(list: name) { [self] in deleteNow(name, ifMatch: ifMatch) }
        }
        router.on("POST", "/v1/lists/{list}/ops", access: .writeList) { [self] request, parameters, _ in
            try made(applyOps(request, parameters))
        }
        router.on("POST", "/v1/lists/{list}/sessions", access: .readList) { [self] in try createSession($0, $1, $2) }
        // Every route on a session (and the event stream, when it comes) is `.session`: its subject is checked.
        router.on("GET", "/v1/sessions/{id}/changes", access: .session) { [self] in try changes($0, $1, $2) }
        router.on("POST", "/v1/sessions/{id}/expand", access: .session) { [self] request, parameters, _ in
            try expand(request, parameters, expanding: true)
        }
        router.on("POST", "/v1/sessions/{id}/collapse", access: .session) { [self] request, parameters, _ in
            try expand(request, parameters, expanding: false)
        }
        router.on("POST", "/v1/sessions/{id}/reset", access: .session) { [self] request, parameters, _ in
            try resetSession(request, parameters)
        }
        router.on("GET", "/v1/sessions/{id}/events", access: .session) { [self] in try events($0, $1, $2) }
        router.on("DELETE", "/v1/sessions/{id}", access: .session) { [self] request, parameters, _ in
            try deleteSession(request, parameters)
        }
    }

    /// The reply of a producer's write, read from its request on this thread (libmicrohttpd's), made where its
    /// store lets it be made soonest (``StoreWrites``):
    /// - a store in memory or on this machine's disk (``ListRegistry/storeAnswersAtOnce``,
    ///   ``ListRegistry/storeSyncsLocally``): here when no other write is under way (``StoreWrites/alone(_:)``),
    ///   else by the store's one writer, which makes every write queued meanwhile and commits them in one
    ///   transaction (``StoreWrites/together(_:in:answer:)``). In memory too: measured, a batch costs less than
    ///   the same writes made at once on two threads that meet on the store's one connection (82 µs of the
    ///   server's time a write against 117);
    /// - any other (a database): on the lane of its list, so that a store that stops answering holds up nothing else.
    private func made(_ write: ListRegistry.QueuedWrite) throws(Problem) -> Reply {
        let now = { [self] () throws(Problem) -> Reply in .response(writeNow(write)) }
        if registry.storeAnswersAtOnce || registry.storeSyncsLocally {
            if let reply = try storeWrites.alone(syncs: registry.storeSyncsLocally, now) { return reply }
            var prepared = write
            registry.prepare(&prepared)
            return storeWrites.together(prepared, in: registry) { [self] in writeResponse($0, list: write.name) }
        }
        return storeWrites.deferred(list: write.name) { [self] in writeNow(write) }
    }

    /// The reply of a delete of `list`, which `delete` makes: at once on this thread when the store answers at once
    /// (``ListRegistry/storeAnswersAtOnce``), or when it waits only on this machine's disk and no other write is
    /// under way (``StoreWrites/alone(_:)``); else on the list's lane (``StoreWrites``).
    private func offloaded(list: String, _ delete: @escaping @Sendable () -> Response) throws(Problem) -> Reply {
        let now = { () throws(Problem) -> Reply in .response(delete()) }
        if registry.storeAnswersAtOnce { return try storeWrites.immediate(now) }
        if registry.storeSyncsLocally, let reply = try storeWrites.alone(now) { return reply }
        return storeWrites.deferred(list: list, delete)
    }

    /// Stops the housekeeping, refuses new writes and ends every session (the service is stopping, and sessions
    /// live in its memory): a waiting long poll is answered `404 session-not-found` and an event stream ends with
    /// `event: gone` (API.md §4, §4c), so that clients open a new session at once, on another instance of a
    /// cluster, rather than learn it from their next request; a new session is refused with `503 overloaded` and
    /// `Retry-After` meanwhile (it would end with the process).
    func shutdown() {
        maintenanceRunning.store(false, ordering: .relaxed)
        storeWrites.stopTakingWrites()
        stopping.store(true, ordering: .relaxed)
        sessions.removeAll()
        longPolls.shutdown()
        streams.shutdown()
    }
}

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
        public init() {}
    }
}
