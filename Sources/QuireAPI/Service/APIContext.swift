import Logging
import QuireAuth
import QuireCore
import QuireHTTP
import QuireSources
import Synchronization

/// What every product route shares: the lists, the sessions, the waiting long polls, the page cache
/// and the settings. Immutable itself; each part guards its own state.
final class APIContext: Sendable {
    let registry: ListRegistry
    let sessions: SessionStore
    /// Answers shared by the sessions that hold the same window.
    let sharedAnswers = SharedAnswers()
    /// The one way into the write path (``ListWrites``): every producer's writes enter there.
    let writes: ListWrites
    /// Where the routes that read the store run (off libmicrohttpd's threads).
    let reads = StoreReads()
    /// The lists' filtered views (openapi.yaml), shared by the sessions and pages with the same filter.
    let views = ListViews()
    let longPolls: LongPolls
    /// Open event streams (openapi.yaml), one per session.
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
    /// The clients' rate-limit buckets (`rateLimits.*`), or `nil` when limits are off.
    let rateLimiter: RateLimiter?
    let logger: Logger
    let serviceMetrics: ServiceMetrics
    /// Whether the housekeeping thread runs (see `startMaintenance()`).
    let maintenanceRunning = Atomic<Bool>(false)
    /// Set by ``shutdown()``: no session opens any more (it would end with the process at once).
    private let stopping = Atomic<Bool>(false)
    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    init(
        registry: ListRegistry, configuration: QuireService.Configuration, keys: TokenKeys, logger: Logger,
        metrics: ServiceMetrics, readiness: Readiness, rateLimitClock: RateLimitClock = .monotonic
    ) {
        self.registry = registry
        writes = ListWrites(registry: registry, logger: logger, sources: configuration.sources)
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
        sessions.observeRemovals { [streams] ids in streams.endGone(sessions: ids) }
        pageCache = PageCache(capacity: configuration.pages.cacheEntries)
        sessionFirstWindows = PageCache(capacity: min(configuration.pages.cacheEntries, 64))
        unchangedAnswers = PageCache(capacity: min(configuration.sessions.capacity, 10_000))
        access = AccessControl(
            writeToken: configuration.writeToken, readToken: configuration.readToken,
            verifier: configuration.jwt.isEnabled ? TokenVerifier(settings: configuration.jwt, keys: keys) : nil,
            sessions: sessions, readiness: readiness, denied: { [metrics] in metrics.denied($0) })
        rateLimiter =
            configuration.rateLimits.enabled
            ? RateLimiter(
                settings: configuration.rateLimits, clock: rateLimitClock,
                refused: { [metrics] in metrics.rateLimited($0) })
            : nil
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

    /// Stops the housekeeping, refuses new writes and ends every session (the service is stopping, and sessions
    /// live in its memory): a waiting long poll is answered `404 session-not-found` and an event stream ends with
    /// `event: gone` (openapi.yaml), so that clients open a new session at once, on another instance of a
    /// cluster, rather than learn it from their next request; a new session is refused with `503 overloaded` and
    /// `Retry-After` meanwhile (it would end with the process).
    func shutdown() {
        maintenanceRunning.store(false, ordering: .relaxed)
        writes.stopTakingWrites()
        reads.stopTakingReads()
        stopping.store(true, ordering: .relaxed)
        sessions.removeAll()
        longPolls.shutdown()
        streams.shutdown()
    }

    /// Starts following the configured sources (once).
    func startFollowers() {
        let followers = writes.followers.withLock { followers in
            if followers.isEmpty {
                followers = writes.sources.map { source in
                    SourceFollower(source: source, writer: writes, limits: registry.limits, logger: logger)
                }
            }
            return followers
        }
        for follower in followers { follower.start() }
    }

    /// Stops the followers: each commits the transaction it is applying, if any, and reads no further.
    func stopFollowers() {
        for follower in writes.followers.withLock({ $0 }) { follower.stop() }
    }

    /// `503 source-syncing` for a read of a list whose source is copying its table (its lists are not whole yet).
    func sourceSyncing(_ list: String) -> Problem? {
        guard let follower = writes.follower(of: list), follower.statistics.isSyncing else { return nil }
        return Problem(
            .sourceSyncing,
            detail: "The list \(list) is being copied from the table \(follower.source.table). Retry shortly.",
            headers: ["Retry-After": "2"])
    }

    /// Returns when no write and no read of the store is queued or running: the store may be closed.
    func waitUntilStoreIdle() {
        writes.waitUntilIdle()
        reads.waitUntilIdle()
    }
}
