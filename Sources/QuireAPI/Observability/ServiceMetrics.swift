import Logging
import Prometheus
import QuireCore
import QuireHTTP
import QuireVersion
import Synchronization

/// One series of `quire_http_requests_total`, kept by its route (the registry holds the collector too).
final class RequestSeries: Sendable {
    let method: String
    let status: Int
    let count: Counter

    init(method: String, status: Int, count: Counter) {
        self.method = method
        self.status = status
        self.count = count
    }
}

/// The service's metrics (swift-prometheus, exposed at `/metrics`) and its access log.
///
/// Per request: a counter by method, route template and status, and a latency histogram by route. At
/// each scrape: gauges of lists, items, sessions, waiting long polls, open event streams and open
/// connections, and counters of evicted and expired sessions, refused connections, requests cut for
/// arriving too slowly, and response body bytes before and after compression. The store's write latency
/// is a histogram fed by ``TimedListStore``.
///
/// Every family is made here, through swift-prometheus's registry with its `# HELP` text and a name in
/// Prometheus's conventions (base units, `_seconds`, `_bytes`, counters ending in `_total`), so that
/// `promtool check metrics` finds nothing to say; but for the routes' latency histogram, recorded on every
/// request's path by ``RouteLatency`` and written after the registry's families in the same text.
final class ServiceMetrics: RequestObserver {
    let registry = ServiceMetrics.registryWithBuildInfo()
    /// The methods counted by name in `quire_http_requests_total`; any other is counted as `OTHER`, so that a client
    /// cannot make series without end by inventing methods.
    /// The method label of `method`: the shared string of a known method (``Request/knownMethods``), else `OTHER`.
    static func methodLabel(_ method: String) -> String {
        // Most requests are GETs: found without walking the list.
        if method == "GET" { return method }
        return Request.knownMethods.first { $0 == method } ?? "OTHER"
    }
    private let accessLog: (any AccessLog)?
    private let scrapeState = Mutex(ScrapeState())
    /// The server whose connections are counted, held weakly: the server holds these metrics (through
    /// its router) for its whole life.
    private let server = Mutex(WeakServer())
    private let connections: Gauge
    private let refused: Counter
    private let cut: Counter
    /// Access-log lines dropped because the log's writer could not keep up.
    private let droppedLines: Counter
    private let bodyBytes: Counter
    private let sentBytes: Counter
    /// Requests refused by the access check, by reason.
    private let denials: [DenialReason: Counter]
    /// Requests refused for their framing (RFC 9112), by reason.
    private let framingRefusals: [FramingRefusal: Counter]
    /// Requests refused by a client's rate limit, by bucket (`quire_rate_limited_total{kind}`), in
    /// ``RateLimitKind`` order.
    private let rateLimitRefusals: [Counter]
    /// `quire_rate_limit_clients_tracked`, set at each scrape.
    private let rateLimitClients: Gauge

    /// What the counters fed at scrape time had reached at the previous scrape.
    private struct ScrapeState {
        var evicted = 0
        var expired = 0
        var loads = 0
        var listEvictions = 0
        var idleReleases = 0
        var viewBuilds = 0
        var viewDrops = 0
        var viewMatches = 0
        var refused = 0
        var cut = 0
        var droppedLines = 0
        var bodyBytes = 0
        var sentBytes = 0
        var framingRefusals: [FramingRefusal: Int] = [:]
        var replication = ReplicationStatus.Counts()
    }

    private struct WeakServer {
        weak var server: HTTPServer?
    }
    let storeWrites: DurationHistogram
    /// Commits made to the store: a batch of writes is one (SQLite's ``GroupCommit`` may still put two commits made
    /// one by one at the same moment in one transaction).
    let storeCommits: Counter
    /// Loads of a list from the store.
    private let listLoads: DurationHistogram
    private let lists: Gauge
    /// The store's backlog and the write lanes' queue.
    private let storeGauges: StoreGauges
    /// The configured bounds the gauges above are read against (so that an alert or a dashboard compares each to
    /// its own limit): `lists.memoryBytes`, `sessions.capacity`, `longPoll.maxWaiters`, `events.maxStreams`,
    /// `server.connectionLimit`, and the SQLite journal's `storage.journalWrites`.
    private let limits: [(Gauge, @Sendable (APIContext) -> Int)]
    private let items: Gauge
    private let listBytes: Gauge
    private let loads: Counter
    private let listEvictions: Counter
    private let idleReleases: Counter
    private let views: Gauge
    private let viewBuilds: Counter
    private let viewDrops: Counter
    private let viewMatches: Counter
    private let sessions: Gauge
    private let waiting: Gauge
    private let streams: Gauge
    private let evicted: Counter
    private let expired: Counter
    /// Replication between instances sharing a PostgreSQL store (all 0 on SQLite).
    private let lagVersions: Gauge
    private let lagSeconds: Gauge
    private let notifications: Counter
    private let catchUps: Counter
    private let conflicts: Counter
    private let reloads: Counter

    private static let seconds = RouteLatency.bounds
    /// The routes' latency family, written by ``RouteLatency`` beside the registry's families.
    private static let latencyName = "quire_http_request_duration_seconds"
    private static let latencyHelp = "Time to answer a request, by route, in seconds."
    /// The routes with a latency series (requested at least once), in the order they were first requested.
    private let observedRoutes = Mutex<[RouteLabel]>([])

    /// A family's name (its unit already in it) and `# HELP` text.
    private static func name(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// - Parameter accessLog: where a line per request goes, or `nil`.
    init(accessLog: (any AccessLog)?) {
        self.accessLog = accessLog
        let registry = registry
        storeWrites = registry.makeDurationHistogram(
            descriptor: Self.name(
                "quire_store_write_duration_seconds", "Time to commit one list write to the store, in seconds."),
            buckets: Self.seconds)
        storeCommits = registry.makeCounter(
            descriptor: Self.name(
                "quire_store_commits_total",
                "Commits made to the store; a batch of writes is one (writes per commit: quire_store_write_duration_seconds_count over this)."
            ))
        listLoads = registry.makeDurationHistogram(
            descriptor: Self.name(
                "quire_list_load_seconds", "Time to load one list from the store into memory, in seconds."),
            buckets: Self.seconds)
        lists = registry.makeGauge(descriptor: Self.name("quire_lists_resident", "Lists held in memory."))
        limits = Self.limitGauges(in: registry)
        storeGauges = StoreGauges(in: registry)
        items = registry.makeGauge(
            descriptor: Self.name("quire_items_resident", "Items of the lists held in memory, children included."))
        listBytes = registry.makeGauge(
            descriptor: Self.name(
                "quire_lists_resident_bytes",
                "Estimated bytes of the lists held in memory: what lists.memoryBytes bounds."
            ))
        loads = registry.makeCounter(
            descriptor: Self.name("quire_list_loads_total", "Lists loaded from the store into memory."))
        views = registry.makeGauge(
            descriptor: Self.name("quire_views", "Filtered views held (one per list and distinct filter in use)."))
        viewBuilds = registry.makeCounter(
            descriptor: Self.name(
                "quire_view_builds_total", "Filtered views built from their list (first use, or a change not followed)."
            ))
        viewDrops = registry.makeCounter(
            descriptor: Self.name("quire_view_evictions_total", "Filtered views dropped, no session holding them."))
        viewMatches = registry.makeCounter(
            descriptor: Self.name(
                "quire_view_matches_total",
                "Views a write's items were matched against (the filters' index spares the others)."))
        listEvictions = registry.makeCounter(
            descriptor: Self.name(
                "quire_list_evictions_total", "Lists that left memory, least recently used, past lists.memoryBytes."))
        idleReleases = registry.makeCounter(
            descriptor: Self.name(
                "quire_list_idle_releases_total",
                "Lists that left memory after lists.idleSeconds without a read, a write or a session."))
        sessions = registry.makeGauge(descriptor: Self.name("quire_sessions_active", "Sessions open."))
        waiting = registry.makeGauge(descriptor: Self.name("quire_long_polls_waiting", "Long polls waiting."))
        streams = registry.makeGauge(
            descriptor: Self.name("quire_event_streams_open", "Event streams open (GET /v1/sessions/{id}/events)."))
        evicted = registry.makeCounter(
            descriptor: Self.name(
                "quire_sessions_evicted_total", "Sessions evicted, least recently used, past sessions.capacity."))
        expired = registry.makeCounter(
            descriptor: Self.name("quire_sessions_expired_total", "Sessions expired after sessions.idleTimeout."))
        connections = registry.makeGauge(descriptor: Self.name("quire_http_connections_open", "Connections open."))
        lagVersions = registry.makeGauge(
            descriptor: Self.name(
                "quire_replication_lag_versions",
                "Lists other instances changed whose changes are being brought here (0 when none is pending)."))
        lagSeconds = registry.makeGauge(
            descriptor: Self.name(
                "quire_replication_lag_seconds",
                "Age of the oldest change committed elsewhere to a list held here and not yet applied here."))
        notifications = registry.makeCounter(
            descriptor: Self.name(
                "quire_replication_notifications_total", "Notifications of commits received from the store."))
        catchUps = registry.makeCounter(
            descriptor: Self.name(
                "quire_replication_catchups_total",
                "Sweeps of the lists held here against the store's positions (after a (re)connection, and every 2 s)."))
        conflicts = registry.makeCounter(
            descriptor: Self.name(
                "quire_replication_conflicts_total",
                "Writes that another instance's commit preceded, replayed and made again."))
        reloads = registry.makeCounter(
            descriptor: Self.name(
                "quire_replication_reloads_total",
                "Lists reloaded whole from the store (a change missed, or the log passed)."))
        refused = registry.makeCounter(
            descriptor: Self.name(
                "quire_http_connections_refused_total", "Connections refused: over a connection limit, or no memory."))
        cut = registry.makeCounter(
            descriptor: Self.name(
                "quire_http_requests_cut_total", "Requests cut for not arriving whole within server.requestTimeout."))
        droppedLines = registry.makeCounter(
            descriptor: Self.name(
                "quire_access_log_dropped_lines_total",
                "Access-log lines dropped because standard error could not keep up (log.accessBuffer was full)."))
        bodyBytes = registry.makeCounter(
            descriptor: Self.name(
                "quire_http_response_body_bytes_total", "Response body bytes as produced, before compression."))
        sentBytes = registry.makeCounter(
            descriptor: Self.name(
                "quire_http_response_body_sent_bytes_total", "Response body bytes as sent, after compression."))
        denials = Self.denialCounters(in: registry)
        (rateLimitRefusals, rateLimitClients) = Self.rateLimitMetrics(in: registry)
        framingRefusals = Self.framingRefusalCounters(in: registry)
    }

    /// A registry with `quire_build_info{version}`, always 1: which release each instance runs, for a rule or a panel
    /// to join on.
    private static func registryWithBuildInfo() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        registry.makeGauge(
            descriptor: Self.name(
                "quire_build_info", "The release this instance runs, in its version label (always 1)."),
            labels: [("version", Release.version)]
        ).set(1 as Int64)
        return registry
    }

    /// The gauges of the configured bounds, each with how to read its bound (0: none).
    private static func limitGauges(
        in registry: PrometheusCollectorRegistry
    ) -> [(Gauge, @Sendable (APIContext) -> Int)] {
        let bounds: [(String, String, @Sendable (APIContext) -> Int)] = [
            (
                "quire_lists_memory_budget_bytes",
                "lists.memoryBytes: the bound of quire_lists_resident_bytes (0: none).",
                { $0.configuration.lists.memoryBytes }
            ),
            (
                "quire_sessions_capacity",
                "sessions.capacity: sessions kept before the least recently used is evicted.",
                { $0.configuration.sessions.capacity }
            ),
            (
                "quire_long_polls_limit", "longPoll.maxWaiters: long polls waiting at once; more get 503.",
                { $0.configuration.longPolls.maxWaiters }
            ),
            (
                "quire_event_streams_limit", "events.maxStreams: event streams open at once; more get 503.",
                { $0.configuration.events.maxStreams }
            ),
            (
                "quire_http_connections_limit", "server.connectionLimit: connections open at once; more are refused.",
                { $0.configuration.http.connectionLimit }
            ),
            (
                "quire_store_journal_limit_entries",
                "storage.journalWrites: journaled writes past which a commit applies the oldest (0 for other stores).",
                { $0.registry.store.backlog?.limit ?? 0 }
            ),
        ]
        return bounds.map { name, help, read in (registry.makeGauge(descriptor: Self.name(name, help)), read) }
    }

    /// The series of `quire_rate_limited_total`, one per kind (in ``RateLimitKind`` order), and
    /// `quire_rate_limit_clients_tracked`: made whether limits are on or not, so that dashboards find them.
    private static func rateLimitMetrics(in registry: PrometheusCollectorRegistry) -> ([Counter], Gauge) {
        let refusals = RateLimitKind.allCases.map {
            registry.makeCounter(
                descriptor: Self.name("quire_rate_limited_total", "Requests refused by a client's rate limit (429)."),
                labels: [("kind", $0.name)])
        }
        let clients = registry.makeGauge(
            descriptor: Self.name(
                "quire_rate_limit_clients_tracked", "Clients whose rate-limit buckets are kept (rateLimits.clients)."))
        return (refusals, clients)
    }

    /// The series of `quire_auth_denials_total`, one per reason.
    private static func denialCounters(in registry: PrometheusCollectorRegistry) -> [DenialReason: Counter] {
        Dictionary(
            uniqueKeysWithValues: DenialReason.allCases.map {
                (
                    $0,
                    registry.makeCounter(
                        descriptor: Self.name("quire_auth_denials_total", "Requests refused by the access check."),
                        labels: [("reason", $0.rawValue)])
                )
            })
    }

    /// The series of `quire_http_framing_refusals_total`, one per reason.
    private static func framingRefusalCounters(in registry: PrometheusCollectorRegistry) -> [FramingRefusal: Counter] {
        Dictionary(
            uniqueKeysWithValues: FramingRefusal.allCases.map {
                (
                    $0,
                    registry.makeCounter(
                        descriptor: Self.name(
                            "quire_http_framing_refusals_total",
                            "Requests refused for their framing (RFC 9112: duplicate Content-Length, obs-fold, ...)."),
                        labels: [("reason", $0.rawValue)])
                )
            })
    }

    /// Counts a request refused by the access check.
    func denied(_ reason: DenialReason) {
        denials[reason]?.increment()
    }

    /// A request refused by its client's bucket of `kind`.
    func rateLimited(_ kind: RateLimitKind) {
        rateLimitRefusals[kind.rawValue].increment()
    }

    /// Counts `server`'s connections from now on.
    func watch(_ server: HTTPServer) {
        self.server.withLock { $0.server = server }
    }

    func requestDidFinish(
        _ request: Request, route: RouteLabel, response: Response, since start: MonotonicInstant,
        subject: String?, trace: TraceID
    ) {
        let elapsed = MonotonicInstant.now.nanoseconds(since: start)
        let status = response.status
        let method = Self.methodLabel(request.method)
        let series = series(route, method: method, status: status)
        series.count.increment()
        route.latency.record(nanoseconds: elapsed)
        accessLog?.record(
            AccessRecord(
                method: request.method, route: route.pattern, status: status, elapsedNanoseconds: elapsed,
                bytes: response.body.count, requestID: request.requestID, subject: subject,
                traceID: trace))
    }

    /// The series of a route, method and status, kept by the route: found without hashing (method labels are the
    /// shared strings of `Request.knownMethods`, so comparing two compares two words), made on the route's first request
    /// with that method and status. The registry returns the collectors it already has for the same labels. A
    /// route's first series makes it one of the routes whose latency is written.
    private func series(_ route: RouteLabel, method: String, status: Int) -> RequestSeries {
        let isOK = status == 200 && method == "GET"
        if isOK, let series = route.okGet.load(ordering: .acquiring) {  // most requests: no lock taken
            return series.takeUnretainedValue()
        }
        let series = route.series.withLock { known in
            if let series = known.first(where: { $0.status == status && $0.method == method }) { return series }
            if known.isEmpty { observedRoutes.withLock { $0.append(route) } }
            let made = RequestSeries(
                method: method, status: status,
                count: registry.makeCounter(
                    descriptor: Self.name(
                        "quire_http_requests_total", "Requests answered, by method, route and status."),
                    labels: [("method", method), ("route", route.pattern), ("status", String(status))]))
            known.append(made)
            return made
        }
        if isOK { route.okGet.store(Unmanaged.passUnretained(series), ordering: .releasing) }  // the same one
        return series
    }

    /// A list was loaded from the store in `duration` (``ListRegistry/observeLoads(_:)``).
    func listLoaded(in duration: Duration) {
        listLoads.record(duration)
    }

    /// The exposition text, with the state gauges brought up to date.
    func scrape(_ context: APIContext) -> [UInt8] {
        let resident = context.registry.resident
        lists.set(Int64(resident.lists))
        items.set(Int64(resident.items))
        listBytes.set(Int64(resident.bytes))
        for (gauge, bound) in limits { gauge.set(Int64(bound(context))) }
        storeGauges.update(context)
        views.set(Int64(context.views.count))
        sessions.set(Int64(context.sessions.count))
        waiting.set(Int64(context.longPolls.count))
        streams.set(Int64(context.streams.count))
        rateLimitClients.set(Int64(context.rateLimiter?.trackedClients ?? 0))
        let server = server.withLock { $0.server }
        connections.set(Int64(server?.connectionCount ?? 0))
        // Read and stored under one lock: two scrapes at once must not count the same increase twice.
        let (before, now) = scrapeState.withLock { state in
            let before = state
            state = ScrapeState(
                evicted: max(state.evicted, context.sessions.evictionCount),
                expired: max(state.expired, context.sessions.expirationCount),
                loads: max(state.loads, context.registry.loadCount),
                listEvictions: max(state.listEvictions, context.registry.evictionCount),
                idleReleases: max(state.idleReleases, context.registry.idleReleaseCount),
                viewBuilds: max(state.viewBuilds, context.views.buildCount),
                viewDrops: max(state.viewDrops, context.views.dropCount),
                viewMatches: max(state.viewMatches, context.views.matchCount),
                refused: max(state.refused, server?.refusedConnections ?? 0),
                cut: max(state.cut, server?.lateRequestsCut ?? 0),
                droppedLines: max(state.droppedLines, accessLog?.droppedLines ?? 0),
                bodyBytes: max(state.bodyBytes, server?.responseBodyBytes ?? 0),
                sentBytes: max(state.sentBytes, server?.responseBodyBytesSent ?? 0),
                framingRefusals: state.framingRefusals.merging(
                    server?.framingRefusalCounts ?? [:], uniquingKeysWith: max),
                replication: context.registry.replication.counts)
            return (before, state)
        }
        let (replicated, replicatedBefore) = (now.replication, before.replication)
        lagVersions.set(Int64(replicated.lagVersions))
        lagSeconds.set(replicated.lagSeconds)
        let replicationDeltas: [(Counter, Int)] = [
            (notifications, replicated.notifications - replicatedBefore.notifications),
            (catchUps, replicated.catchUps - replicatedBefore.catchUps),
            (conflicts, replicated.conflicts - replicatedBefore.conflicts),
            (reloads, replicated.listReloads - replicatedBefore.listReloads),
        ]
        for (counter, delta) in replicationDeltas where delta > 0 {
            counter.increment(by: Int64(delta))
        }
        for (counter, delta) in [
            (evicted, now.evicted - before.evicted), (expired, now.expired - before.expired),
            (loads, now.loads - before.loads), (listEvictions, now.listEvictions - before.listEvictions),
            (idleReleases, now.idleReleases - before.idleReleases),
            (viewBuilds, now.viewBuilds - before.viewBuilds), (viewDrops, now.viewDrops - before.viewDrops),
            (viewMatches, now.viewMatches - before.viewMatches),
            (refused, now.refused - before.refused), (cut, now.cut - before.cut),
            (droppedLines, now.droppedLines - before.droppedLines),
            (bodyBytes, now.bodyBytes - before.bodyBytes), (sentBytes, now.sentBytes - before.sentBytes),
        ] where delta > 0 {
            counter.increment(by: Int64(delta))
        }
        for (reason, count) in now.framingRefusals {
            let delta = count - before.framingRefusals[reason, default: 0]
            if delta > 0 { framingRefusals[reason]?.increment(by: Int64(delta)) }
        }
        var text = registry.emitToBuffer()
        let routes = observedRoutes.withLock { $0 }
        if !routes.isEmpty {
            text.append(contentsOf: "# HELP \(Self.latencyName) \(Self.latencyHelp)\n".utf8)
            text.append(contentsOf: "# TYPE \(Self.latencyName) histogram\n".utf8)
            for route in routes.sorted(by: { $0.pattern < $1.pattern }) {
                route.latency.write(name: Self.latencyName, route: route.pattern, into: &text)
            }
        }
        SourceMetrics.write(context.writes.followers.withLock { $0 }, into: &text)
        return text
    }
}

/// The gauges of writes not yet where they stay: the store's journal of writes not yet applied to its tables
/// (``ListStore/backlog``; 0 for other stores), and the writes queued or running on the write lanes and the writer
/// of batches (``WriteScheduler/offThread``).
struct StoreGauges: Sendable {
    let journalEntries: Gauge
    let journalBytes: Gauge
    let writesQueued: Gauge

    init(in registry: PrometheusCollectorRegistry) {
        func gauge(_ name: String, _ help: String) -> Gauge {
            registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help))
        }
        journalEntries = gauge(
            "quire_store_journal_entries",
            "Writes acknowledged and journaled, not yet applied to the SQLite file's tables (0 for other stores).")
        journalBytes = gauge(
            "quire_store_journal_bytes", "Encoded bytes of the journaled writes not yet applied (held in memory).")
        writesQueued = gauge(
            "quire_store_writes_queued",
            "Writes queued or running on the write lanes and the writer of batches (off the receiving threads).")
    }

    /// Brought up to date at a scrape.
    func update(_ context: APIContext) {
        let backlog = context.registry.store.backlog ?? StoreBacklog(entries: 0, bytes: 0, limit: 0)
        journalEntries.set(Int64(backlog.entries))
        journalBytes.set(Int64(backlog.bytes))
        writesQueued.set(Int64(context.writes.scheduler.offThread.load(ordering: .relaxed)))
    }
}

/// A store that times every commit into the service's metrics, and counts its transactions.
struct TimedListStore: ListStoreDecorator {
    let base: any ListStore
    let timer: DurationHistogram
    let commits: Counter

    /// The store's own: timing a commit makes it wait on nothing.
    var answersAtOnce: Bool { base.answersAtOnce }

    /// The store's own, as `answersAtOnce`.
    var syncsLocally: Bool { base.syncsLocally }

    /// The store's own: the batch is timed once, and each of its writes waited that long.
    var commitsTogether: Bool { base.commitsTogether }

    func commit(together commits: [ListCommit]) throws {
        let start = ContinuousClock.now
        defer {
            let elapsed = ContinuousClock.now - start
            for _ in commits { timer.record(elapsed) }
        }
        try base.commit(together: commits)
        self.commits.increment()
    }

    /// The store's own: a source's transaction is timed as a batch.
    var keepsSources: Bool { base.keepsSources }

    func commit(together commits: [ListCommit], progress: SourceProgress) throws -> [String: Int64] {
        let start = ContinuousClock.now
        defer {
            let elapsed = ContinuousClock.now - start
            for _ in commits { timer.record(elapsed) }
        }
        let positions = try base.commit(together: commits, progress: progress)
        self.commits.increment()
        return positions
    }

    func commit(list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?)
        throws -> Int64?
    {
        let start = ContinuousClock.now
        defer { timer.record(ContinuousClock.now - start) }
        let position = try base.commit(list: list, previous: previous, at: position, next: next, write: write)
        commits.increment()
        return position
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64` (past ±292 years). Below 9.2 s its attoseconds
    /// fit 64 bits and one 64-bit division answers; `components` divides an `Int128`, and converting the `Int128`
    /// to a `Double` takes a slow generic path.
    var nanoseconds: Int64 {
        let attoseconds = self.attoseconds
        let high = attoseconds >> 63
        if high == 0 || high == -1 { return Int64(truncatingIfNeeded: attoseconds) / 1_000_000_000 }
        let (seconds, fraction) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowAgain) = whole.addingReportingOverflow(fraction / 1_000_000_000)
        if overflow || overflowAgain { return seconds < 0 ? .min : .max }
        return sum
    }
}
