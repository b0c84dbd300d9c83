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
        policies = RateLimitKind.allCases.map { kind in
            "\"\(kind.name)\";q=\(settings[kind].perSecond);w=1"
        }
    }

    /// What drawing on a bucket gave a request: whether it may go on, and its `RateLimit-Policy` and `RateLimit`
    /// fields.
    struct Decision {
        let kind: RateLimitKind
        let draw: TokenBucket.Draw
        let rate: BucketRate
        let policy: String

        var allowed: Bool { draw.allowed }

        /// `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers): `"writes";q=100;w=1` and
        /// `"writes";r=57;t=1`.
        var fields: HTTPHeaders {
            HTTPHeaders(fields: [
                NamedValue(name: "RateLimit-Policy", value: policy),
                NamedValue(name: "RateLimit", value: "\"\(kind.name)\";r=\(draw.remaining);t=\(draw.resetSeconds)"),
            ])
        }

        /// `429 rate-limited` with `Retry-After` and the fields.
        var problem: Problem {
            var headers = fields
            headers.add("Retry-After", String(draw.retryAfterSeconds))
            return Problem(
                .rateLimited,
                detail:
                    "Too many \(kind.name) from this client: \(rate.perSecond) a second are allowed, in bursts of at most \(rate.burst).",
                headers: headers)
        }
    }

    /// Draws one token of `kind` for `client`; a refusal is counted.
    ///
    /// - Complexity: O(1) expected, under the lock of the client's shard only.
    func draw(_ kind: RateLimitKind, for client: RateLimitClient) -> Decision {
        let now = clock.now()
        let shard = shards[client.hashValue & shardMask]
        let settings = settings
        let draw = shard.table.withLock { $0.draw(kind, for: client, at: now, settings: settings) }
        if !draw.allowed { refused(kind) }
        return Decision(kind: kind, draw: draw, rate: settings[kind], policy: policies[kind.rawValue])
    }

    /// The clients whose buckets are kept now (`quire_rate_limit_clients_tracked`).
    ///
    /// - Complexity: O(*s*) in the shards, each locked in turn.
    var trackedClients: Int {
        shards.reduce(0) { total, shard in total + shard.table.withLock { $0.count } }
    }

    /// Whether `client`'s buckets are kept (for tests of the bound).
    func isTracking(_ client: RateLimitClient) -> Bool {
        shards[client.hashValue & shardMask].table.withLock { $0.contains(client) }
    }
}
