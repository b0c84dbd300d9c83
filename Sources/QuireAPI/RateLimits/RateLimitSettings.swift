/// What a client may ask of one kind (API.md §6c): a token bucket refilled continuously.
public struct BucketRate: Sendable, Equatable {
    /// Tokens added per second: the sustained rate, and the `q` of `RateLimit-Policy` (`w=1`).
    public var perSecond: Int
    /// The bucket's size: how many requests a client that was quiet may make at once.
    public var burst: Int

    public init(perSecond: Int, burst: Int) {
        self.perSecond = perSecond
        self.burst = burst
    }
}

/// The kinds of request a client has a bucket for (API.md §6c), by the route it asks.
public enum RateLimitKind: Int, Sendable, CaseIterable {
    /// Pages, `GET /v1/lists`, session answers, the start of a long poll or a stream.
    case reads
    /// `PUT`, ops and `DELETE` of a list.
    case writes
    /// `POST /v1/lists/{list}/sessions`.
    case sessions

    /// The name in `RateLimit-Policy`, `RateLimit` and the `kind` label of `quire_rate_limited_total`.
    public var name: String {
        switch self {
        case .reads: "reads"
        case .writes: "writes"
        case .sessions: "sessions"
        }
    }
}

/// Rate limits per client (`rateLimits.*`, API.md §6c). Off by default, so that load tools measure the server.
public struct RateLimitSettings: Sendable, Equatable {
    /// `rateLimits.enabled` (default `false`).
    public var enabled = false
    /// `rateLimits.clients` (default 100,000): the clients whose buckets are kept; past it the least recently seen
    /// is forgotten (and starts again with full buckets when it comes back).
    public var clients = 100_000
    /// `rateLimits.reads.*` (default 200 per second, burst 400).
    public var reads = BucketRate(perSecond: 200, burst: 400)
    /// `rateLimits.writes.*` (default 100 per second, burst 200).
    public var writes = BucketRate(perSecond: 100, burst: 200)
    /// `rateLimits.sessions.*` (default 10 per second, burst 20).
    public var sessions = BucketRate(perSecond: 10, burst: 20)

    public init() {}

    public subscript(kind: RateLimitKind) -> BucketRate {
        get {
            switch kind {
            case .reads: reads
            case .writes: writes
            case .sessions: sessions
            }
        }
        set {
            switch kind {
            case .reads: reads = newValue
            case .writes: writes = newValue
            case .sessions: sessions = newValue
            }
        }
    }
}

/// The monotonic time the buckets refill by, in seconds from an unspecified start: the instant the router read when the
/// request arrived (no second reading per request), or a clock a test moves by hand so that buckets refill without
/// sleeping.
public struct RateLimitClock: Sendable {
    /// The seconds a draw is made at, for a request that arrived at the instant given.
    let seconds: @Sendable (MonotonicInstant) -> Double

    /// A clock of a test's own: `now` is read at every draw, whenever the request arrived.
    public init(now: @escaping @Sendable () -> Double) {
        seconds = { _ in now() }
    }

    private init(seconds: @escaping @Sendable (MonotonicInstant) -> Double) {
        self.seconds = seconds
    }

    /// The system's monotonic clock, as read when each request arrived.
    public static let monotonic = RateLimitClock(seconds: { Double($0.nanoseconds) / 1e9 })
}
