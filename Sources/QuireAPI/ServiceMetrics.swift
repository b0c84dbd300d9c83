import CoreMetrics
import Logging
import Prometheus
import QuireCore
import QuireHTTP
import Synchronization

/// The service's metrics (swift-metrics, exposed by swift-prometheus at `/metrics`) and its access log.
///
/// Per request: a counter by method, route template and status, and a latency histogram by route. At
/// each scrape: gauges of lists, items, sessions, waiting long polls, open event streams and open
/// connections, and counters
/// of evicted and expired sessions, refused connections and requests cut for arriving too slowly. The
/// store's write latency is a histogram fed by ``TimedListStore``.
final class ServiceMetrics: RequestObserver {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let requests = Mutex<[RequestKey: (count: CoreMetrics.Counter, latency: CoreMetrics.Timer)]>([:])

    private struct RequestKey: Hashable {
        let method: String
        let route: String
        let status: Int
    }
    private let accessLogger: Logger?
    private let scrapeState = Mutex(ScrapeState())
    /// The server whose connections are counted, held weakly: the server holds these metrics (through
    /// its router) for its whole life.
    private let server = Mutex(WeakServer())
    private let connections: CoreMetrics.Gauge
    private let refused: CoreMetrics.Counter
    private let cut: CoreMetrics.Counter
    /// Requests refused by the access check, by reason.
    private let denials: [DenialReason: CoreMetrics.Counter]

    /// What the counters fed at scrape time had reached at the previous scrape.
    private struct ScrapeState {
        var evicted = 0
        var expired = 0
        var refused = 0
        var cut = 0
    }

    private struct WeakServer {
        weak var server: HTTPServer?
    }
    let storeWrites: CoreMetrics.Timer
    private let lists: CoreMetrics.Gauge
    private let items: CoreMetrics.Gauge
    private let sessions: CoreMetrics.Gauge
    private let waiting: CoreMetrics.Gauge
    private let streams: CoreMetrics.Gauge
    private let evicted: CoreMetrics.Counter
    private let expired: CoreMetrics.Counter

    /// - Parameter accessLog: the logger of the access log (one `info` line per request), or `nil`.
    init(accessLog: Logger?) {
        var factory = PrometheusMetricsFactory(registry: registry)
        let seconds: [Duration] = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60].map {
            .nanoseconds(Int64($0 * 1e9))
        }
        factory.defaultDurationHistogramBuckets = seconds
        self.factory = factory
        accessLogger = accessLog
        storeWrites = CoreMetrics.Timer(label: "quire_store_write_duration_seconds", factory: factory)
        lists = CoreMetrics.Gauge(label: "quire_lists", factory: factory)
        items = CoreMetrics.Gauge(label: "quire_items", factory: factory)
        sessions = CoreMetrics.Gauge(label: "quire_sessions_active", factory: factory)
        waiting = CoreMetrics.Gauge(label: "quire_long_polls_waiting", factory: factory)
        streams = CoreMetrics.Gauge(label: "quire_event_streams_open", factory: factory)
        evicted = CoreMetrics.Counter(label: "quire_sessions_evicted_total", factory: factory)
        expired = CoreMetrics.Counter(label: "quire_sessions_expired_total", factory: factory)
        connections = CoreMetrics.Gauge(label: "quire_http_connections_open", factory: factory)
        refused = CoreMetrics.Counter(label: "quire_http_connections_refused_total", factory: factory)
        cut = CoreMetrics.Counter(label: "quire_http_requests_cut_total", factory: factory)
        denials = Dictionary(
            uniqueKeysWithValues: DenialReason.allCases.map {
                (
                    $0,
                    CoreMetrics.Counter(
                        label: "quire_auth_denials_total", dimensions: [("reason", $0.rawValue)], factory: factory)
                )
            })
    }

    /// Counts a request refused by the access check.
    func denied(_ reason: DenialReason) {
        denials[reason]?.increment()
    }

    /// Counts `server`'s connections from now on.
    func watch(_ server: HTTPServer) {
        self.server.withLock { $0.server = server }
    }

    func requestDidFinish(
        _ request: Request, route: String, response: Response, since start: ContinuousClock.Instant, subject: String?
    ) {
        let elapsed = ContinuousClock.now - start
        let status = response.status
        let key = RequestKey(method: request.method, route: route, status: status)
        let (counter, timer) = requests.withLock { metrics in
            if let known = metrics[key] { return known }
            let made = (
                count: CoreMetrics.Counter(
                    label: "quire_http_requests_total",
                    dimensions: [("method", request.method), ("route", route), ("status", String(status))],
                    factory: factory),
                latency: CoreMetrics.Timer(
                    label: "quire_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            )
            metrics[key] = made
            return made
        }
        counter.increment()
        timer.recordNanoseconds(elapsed.nanoseconds)
        accessLogger?.info(
            "request",
            metadata: Self.accessMetadata(
                request, route: route, status: status, elapsed: elapsed, response: response, subject: subject))
    }

    /// One access-log line's fields: the subject of the caller's token, never the token.
    private static func accessMetadata(
        _ request: Request, route: String, status: Int, elapsed: Duration, response: Response, subject: String?
    ) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "method": "\(request.method)", "route": "\(route)", "status": "\(status)",
            "duration_ms": "\(Double(elapsed.nanoseconds) / 1e6)",
            "bytes": "\(response.body.count)", "request_id": "\(request.requestID)",
        ]
        if let subject { metadata["subject"] = "\(subject)" }
        return metadata
    }

    /// The exposition text, with the state gauges brought up to date.
    func scrape(_ context: APIContext) -> [UInt8] {
        let totals = context.registry.totals
        lists.record(totals.lists)
        items.record(totals.items)
        sessions.record(context.sessions.count)
        waiting.record(context.longPolls.count)
        streams.record(context.streams.count)
        let server = server.withLock { $0.server }
        connections.record(server?.connectionCount ?? 0)
        // Read and stored under one lock: two scrapes at once must not count the same increase twice.
        let (before, now) = scrapeState.withLock { state in
            let before = state
            state = ScrapeState(
                evicted: max(state.evicted, context.sessions.evictionCount),
                expired: max(state.expired, context.sessions.expirationCount),
                refused: max(state.refused, server?.refusedConnections ?? 0),
                cut: max(state.cut, server?.lateRequestsCut ?? 0))
            return (before, state)
        }
        for (counter, delta) in [
            (evicted, now.evicted - before.evicted), (expired, now.expired - before.expired),
            (refused, now.refused - before.refused), (cut, now.cut - before.cut),
        ] where delta > 0 {
            counter.increment(by: delta)
        }
        return registry.emitToBuffer()
    }
}

/// A store that times every commit into the service's metrics.
struct TimedListStore: ListStore {
    let base: any ListStore
    let timer: CoreMetrics.Timer

    func loadAll(limits: ListLimits) throws -> [String: ListVersion] {
        try base.loadAll(limits: limits)
    }

    func commit(list: String, previous: ListVersion?, next: ListVersion) throws {
        let start = ContinuousClock.now
        defer { timer.recordNanoseconds((ContinuousClock.now - start).nanoseconds) }
        try base.commit(list: list, previous: previous, next: next)
    }

    func delete(list: String) throws {
        try base.delete(list: list)
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
