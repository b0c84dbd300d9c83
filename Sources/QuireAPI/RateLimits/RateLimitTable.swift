import QuireAuth
import QuireHTTP

/// Whose buckets a request draws on (API.md §6c): its JSON Web Token's `sub`, else its static token, else the
/// address it came from. Hashed and compared without allocating: a subject is the token's own string, the static
/// tokens are named by which one they are (never by their secret), an address is 128 bits.
enum RateLimitClient: Hashable, Sendable {
    case subject(String)
    case writeToken
    case readToken
    case address(PeerAddress)

    init(_ caller: Caller, from address: PeerAddress) {
        switch caller.credential {
        case .token(let token): self = .subject(token.subject)  // a token without `sub` is refused
        case .writeToken: self = .writeToken
        case .readToken: self = .readToken
        case .none: self = .address(address)
        }
    }

    /// A hash that picks the client's shard: cheaper than `hashValue` (SipHash), which the shard's dictionary computes
    /// again. Not seeded, and not an index into the dictionary: clients made to collide share a lock and their shard's
    /// share of the clients tracked, so they may push its least recently seen client out sooner, which only ever
    /// gives that client full buckets again.
    var shardHash: Int {
        switch self {
        case .subject(let subject):
            // FNV-1a over the subject's bytes (a token's `sub`, tens of bytes).
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in subject.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return Int(truncatingIfNeeded: hash >> 7)
        case .writeToken: return 1
        case .readToken: return 2
        case .address(let address):
            // The low word holds an IPv4 address; both words mixed for IPv6 (a Fibonacci multiply, high bits kept).
            let mixed = (address.low ^ (address.high &* 0x9e37_79b9_7f4a_7c15)) &* 0x9e37_79b9_7f4a_7c15
            return Int(truncatingIfNeeded: mixed >> 32)
        }
    }
}

/// One token bucket: its tokens when last drawn on, and when that was (the clock's seconds). Refilled as it is
/// drawn on, from the time gone by: no timer runs.
struct TokenBucket {
    var tokens: Double
    var updated: Double

    /// What drawing one token at `now` gave.
    struct Draw: Equatable {
        var allowed: Bool
        /// Tokens left after this request, as a whole number (`r` of `RateLimit`).
        var remaining: Int
        /// Whole seconds until the bucket holds the policy's quota again (`t`), at least 1.
        var resetSeconds: Int
        /// Whole seconds until a token is there (`Retry-After` of a refusal), at least 1; 0 when allowed.
        var retryAfterSeconds: Int

        /// A draw from a full bucket: `burst - 1` left, the quota back within the second.
        static func full(of rate: BucketRate) -> Draw {
            Draw(allowed: true, remaining: rate.burst - 1, resetSeconds: 1, retryAfterSeconds: 0)
        }

        /// A refusal by a bucket that holds less than a token: nothing left, a token (and the quota) back within the
        /// second when the rate is at least one a second, as it nearly always is.
        static func emptied(of rate: BucketRate) -> Draw {
            Draw(allowed: false, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1)
        }
    }

    /// Refills for the time since the last draw (never past `burst`), then takes a token if there is one.
    mutating func draw(at now: Double, rate: BucketRate) -> Draw {
        let perSecond = Double(rate.perSecond)
        let burst = Double(rate.burst)
        // A clock read on another thread may be a little behind the one that drew last: no time went by then.
        if now > updated {
            tokens = min(burst, tokens + (now - updated) * perSecond)
            updated = now
        }
        // A full bucket, what a client under its limit nearly always finds: its answer is known without dividing.
        if tokens == burst && burst >= 1 {
            tokens -= 1
            return .full(of: rate)
        }
        let allowed = tokens >= 1
        if allowed { tokens -= 1 }
        let quota = min(perSecond, burst)
        let reset = max(1, Int(((quota - tokens) / perSecond).rounded(.up)))
        let retry = allowed ? 0 : max(1, Int(((1 - tokens) / perSecond).rounded(.up)))
        return Draw(
            allowed: allowed, remaining: Int(tokens.rounded(.down)), resetSeconds: reset, retryAfterSeconds: retry)
    }
}

/// The buckets of the clients of one shard, with the least recently seen forgotten first past `capacity`.
///
/// Entries live in one array, linked from the most to the least recently seen by their indexes, and a
/// dictionary finds a client's entry: seeing a known client moves its entry to the front and updates its bucket in
/// place (nothing allocated); a new client past the capacity takes the least recently seen one's entry.
///
/// - Invariant: `index.count == entries.count <= capacity`, and the links visit every entry once.
struct RateLimitTable {
    private struct Entry {
        var client: RateLimitClient
        var buckets: (TokenBucket, TokenBucket, TokenBucket)
        /// The next more recently seen entry, or -1.
        var newer: Int32
        /// The next less recently seen entry, or -1.
        var older: Int32

        /// Draws on the bucket of `kind` where it is stored, not on a copy written back.
        mutating func draw(_ kind: RateLimitKind, at now: Double, rate: BucketRate) -> TokenBucket.Draw {
            switch kind {
            case .reads: buckets.0.draw(at: now, rate: rate)
            case .writes: buckets.1.draw(at: now, rate: rate)
            case .sessions: buckets.2.draw(at: now, rate: rate)
            }
        }
    }

    let capacity: Int
    private var index: [RateLimitClient: Int32] = [:]
    private var entries: [Entry] = []
    private var newest: Int32 = -1
    private var oldest: Int32 = -1

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        // Grown once up front (bounded by the capacity, at most the shard's share of `rateLimits.clients`), so that
        // a new client costs no rehash of the others.
        index.reserveCapacity(self.capacity)
    }

    var count: Int { entries.count }

    /// Draws one token of `kind` from `client`'s bucket at `now`, making its buckets (full) when it is new.
    ///
    /// - Complexity: O(1) expected.
    mutating func draw(_ kind: RateLimitKind, for client: RateLimitClient, at now: Double, settings: RateLimitSettings)
        -> TokenBucket.Draw
    {
        let slot: Int32
        // The client seen last (a client's requests come in runs): already the newest, and found without hashing.
        if newest >= 0, entries[Int(newest)].client == client {
            let draw = entries[Int(newest)].draw(kind, at: now, rate: settings[kind])
            assertInvariants()
            return draw
        }
        if let found = index[client] {
            slot = found
            unlink(slot)
        } else {
            slot = admit(client, at: now, settings: settings)
        }
        link(slot)
        let draw = entries[Int(slot)].draw(kind, at: now, rate: settings[kind])
        assertInvariants()
        return draw
    }

    /// Whether `client` is tracked (for tests of the bound).
    func contains(_ client: RateLimitClient) -> Bool {
        index[client] != nil
    }

    /// A new entry for `client`, not linked: a fresh slot, or the least recently seen client's.
    private mutating func admit(_ client: RateLimitClient, at now: Double, settings: RateLimitSettings) -> Int32 {
        let fresh = Entry(
            client: client,
            buckets: (
                TokenBucket(tokens: Double(settings.reads.burst), updated: now),
                TokenBucket(tokens: Double(settings.writes.burst), updated: now),
                TokenBucket(tokens: Double(settings.sessions.burst), updated: now)
            ),
            newer: -1, older: -1)
        if entries.count < capacity {
            entries.append(fresh)
            let slot = Int32(entries.count - 1)
            index[client] = slot
            return slot
        }
        let slot = oldest
        unlink(slot)
        index[entries[Int(slot)].client] = nil
        entries[Int(slot)] = fresh
        index[client] = slot
        return slot
    }

    private mutating func unlink(_ slot: Int32) {
        let (newer, older) = (entries[Int(slot)].newer, entries[Int(slot)].older)
        if newer >= 0 { entries[Int(newer)].older = older } else { newest = older }
        if older >= 0 { entries[Int(older)].newer = newer } else { oldest = newer }
        entries[Int(slot)].newer = -1
        entries[Int(slot)].older = -1
    }

    private mutating func link(_ slot: Int32) {
        entries[Int(slot)].older = newest
        entries[Int(slot)].newer = -1
        if newest >= 0 { entries[Int(newest)].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private func assertInvariants() {
        #if DEBUG
            assert(index.count == entries.count && entries.count <= capacity)
            if entries.count <= 64 {
                var visited = 0
                var slot = newest
                while slot >= 0 {
                    visited += 1
                    slot = entries[Int(slot)].older
                }
                assert(visited == entries.count, "the recency links miss entries")
            }
        #endif
    }
}
