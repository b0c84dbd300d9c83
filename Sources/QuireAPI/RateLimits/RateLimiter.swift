import QuireHTTP
import Synchronization

/// The token buckets of every client (API.md §6c), in shards: a request locks only the shard its client hashes
/// to, so that readers of different clients rarely meet on a lock, and a known client's buckets are updated in
/// place, allocating nothing.
///
/// Each shard keeps its share of `rateLimits.clients` and forgets its least recently seen client first; below 128
/// clients there is one shard, so that the bound is exact least-recently-seen order.
final class RateLimiter: Sendable {
    /// One shard: its own lock around its clients' table. A class, so that the shards can sit in an array (a
    /// `Mutex` cannot be copied into one).
    private final class Shard: Sendable {
        let table: Mutex<RateLimitTable>

        init(capacity: Int) {
            table = Mutex(RateLimitTable(capacity: capacity))
        }
    }

    let settings: RateLimitSettings
    private let shards: [Shard]
    /// `shards.count - 1` (a power of two minus one): a client's shard is its hash's low bits.
    private let shardMask: Int
    private let clock: RateLimitClock
    /// Told of every refusal, for `quire_rate_limited_total{kind}`.
    private let refused: @Sendable (RateLimitKind) -> Void
    /// `RateLimit-Policy` of each kind, made once: it never changes.
    private let policies: [String]
    /// The fields of each kind for a client whose bucket was full (``Decision/recurring``), made once.
    private let fullFields: [HTTPHeaders]
    /// The `429` of each kind for a client whose bucket is empty (``TokenBucket/Draw/emptied(of:)``), prepared once:
    /// what nearly every refusal of a flooding client is, sent from the shared response at the price of a page
    /// read, so that the flood costs the other clients as little as it can.
    private let refusals: [PreparedResponse]

    init(
        settings: RateLimitSettings, clock: RateLimitClock = .monotonic,
        refused: @escaping @Sendable (RateLimitKind) -> Void = { _ in }
    ) {
        self.settings = settings
        self.clock = clock
        self.refused = refused
        let clients = max(1, settings.clients)
        var count = 1
        while count < 64 && count * 2 * 64 <= clients { count *= 2 }
        shards = (0..<count).map { _ in Shard(capacity: clients / count) }
        shardMask = count - 1
        let policies = RateLimitKind.allCases.map { kind in
            "\"\(kind.name)\";q=\(settings[kind].perSecond);w=1"
        }
        self.policies = policies
        fullFields = RateLimitKind.allCases.map { kind in
            let full = TokenBucket.Draw.full(of: settings[kind])
            return Self.fields(of: kind, policy: policies[kind.rawValue], remaining: full.remaining, reset: 1)
        }
        refusals = RateLimitKind.allCases.map { kind in
            let decision = Decision(kind: kind, draw: .emptied(of: settings[kind]), rate: settings[kind])
            var response = Self.problem(of: decision, policy: policies[kind.rawValue]).response
            response.headers.add("Cache-Control", "no-store")  // CachePolicy's for every status but 200 and 304
            return PreparedResponse(response)
        }
    }

    /// The answer to a request `decision` refuses: the prepared `429` of its kind when the bucket is just empty, else
    /// one made for it.
    func refusal(_ decision: Decision) -> Reply {
        if decision.draw == .emptied(of: decision.rate) { return .prepared(refusals[decision.kind.rawValue]) }
        return .response(Self.problem(of: decision, policy: policies[decision.kind.rawValue]).response)
    }

    /// What drawing on a bucket gave a request: whether it may go on, and what its `RateLimit-Policy` and `RateLimit`
    /// fields say (``fields(of:)``). Plain values only: it is made for every request that draws.
    struct Decision {
        let kind: RateLimitKind
        let draw: TokenBucket.Draw
        let rate: BucketRate

        var allowed: Bool { draw.allowed }

        /// Whether the bucket was full: what every request of a client under its limit draws (its bucket refills
        /// faster than it spends), so that its fields are the same each time and a prepared response can be sent
        /// with them as it is shared, without a response made for the request (``Reply/adding(_:recurring:)``).
        var recurring: Bool { draw == TokenBucket.Draw.full(of: rate) }
    }

    /// `RateLimit-Policy` and `RateLimit` of `decision` (draft-ietf-httpapi-ratelimit-headers): `"writes";q=100;w=1`
    /// and `"writes";r=57;t=1`; those of a full bucket made once.
    func fields(of decision: Decision) -> HTTPHeaders {
        if decision.recurring { return fullFields[decision.kind.rawValue] }
        return Self.fields(
            of: decision.kind, policy: policies[decision.kind.rawValue], remaining: decision.draw.remaining,
            reset: decision.draw.resetSeconds)
    }

    private static func fields(of kind: RateLimitKind, policy: String, remaining: Int, reset: Int) -> HTTPHeaders {
        HTTPHeaders(fields: [
            NamedValue(name: "RateLimit-Policy", value: policy),
            NamedValue(name: "RateLimit", value: "\"\(kind.name)\";r=\(remaining);t=\(reset)"),
        ])
    }

    /// `429 rate-limited` with `Retry-After` and the fields.
    private static func problem(of decision: Decision, policy: String) -> Problem {
        var headers = fields(
            of: decision.kind, policy: policy, remaining: decision.draw.remaining, reset: decision.draw.resetSeconds)
        headers.add("Retry-After", String(decision.draw.retryAfterSeconds))
        let rate = decision.rate
        return Problem(
            .rateLimited,
            detail:
                "Too many \(decision.kind.name) from this client: \(rate.perSecond) a second are allowed, in bursts of at most \(rate.burst).",
            headers: headers)
    }

    /// Draws one token of `kind` for `client`; a refusal is counted.
    ///
    /// - Complexity: O(1) expected, under the lock of the client's shard only.
    /// - Parameter arrival: when the request arrived, which the router read already (see ``RateLimitClock``).
    func draw(_ kind: RateLimitKind, for client: RateLimitClient, at arrival: MonotonicInstant) -> Decision {
        let now = clock.seconds(arrival)
        let settings = settings
        let draw = shard(of: client).table.withLock { $0.draw(kind, for: client, at: now, settings: settings) }
        if !draw.allowed { refused(kind) }
        return Decision(kind: kind, draw: draw, rate: settings[kind])
    }

    /// The clients whose buckets are kept now (`quire_rate_limit_clients_tracked`).
    ///
    /// - Complexity: O(*s*) in the shards, each locked in turn.
    var trackedClients: Int {
        shards.reduce(0) { total, shard in total + shard.table.withLock { $0.count } }
    }

    /// Whether `client`'s buckets are kept (for tests of the bound).
    func isTracking(_ client: RateLimitClient) -> Bool {
        shard(of: client).table.withLock { $0.contains(client) }
    }

    private func shard(of client: RateLimitClient) -> Shard {
        shards[client.shardHash & shardMask]
    }
}
