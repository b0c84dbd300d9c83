import Foundation
import QuireCore
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

@testable import QuireAPI
@testable import QuireAuth

/// A clock the test moves by hand: buckets refill by it, without sleeping.
final class ManualClock: Sendable {
    private let seconds = Mutex<Double>(1_000)

    func advance(_ interval: Double) {
        seconds.withLock { $0 += interval }
    }

    var clock: RateLimitClock {
        RateLimitClock { [self] in seconds.withLock { $0 } }
    }
}

/// Rate limits (API.md §6c) over HTTP against a real service: each bucket refuses past its burst and refills at
/// its rate, the fields' values, `Retry-After`, nothing done for a refused request, the keys, and the bound on the
/// clients tracked.
@Suite("Rate limits")
struct RateLimitTests {
    /// A service with limits on, the write token `writer`, and the buckets as `configure` sets them.
    static func fixture(
        _ clock: ManualClock, configure: (inout RateLimitSettings) -> Void = { _ in }
    ) throws -> APIFixture {
        try APIFixture(rateLimitClock: clock.clock) {
            $0.writeToken = "writer"
            $0.rateLimits.enabled = true
            configure(&$0.rateLimits)
        }
    }

    static let writer = [("Authorization", "Bearer writer")]

    /// Whether the service's `/metrics` has the series `line` names with the value it gives (`name{labels} 3`),
    /// however the value is written (a gauge as `3.0`).
    static func metric(_ api: APIFixture, _ line: String) throws -> Bool {
        let (series, value) = (line.split(separator: " ")[0], Double(line.split(separator: " ")[1]))
        return try api.call("GET", "/metrics").text.split(separator: "\n").contains {
            let parts = $0.split(separator: " ")
            return parts.count == 2 && parts[0] == series && Double(parts[1]) == value
        }
    }

    /// Expects `429 rate-limited` with `Retry-After` and the bucket's fields.
    static func expectRefused(_ response: ClientResponse, kind: String, retryAfter: String = "1") throws {
        #expect(response.status == 429, "\(response.status) \(response.text)")
        #expect(try response.problemSlug() == "rate-limited")
        #expect(response.headers["Retry-After"] == retryAfter)
        #expect(response.headers["RateLimit"] == "\"\(kind)\";r=0;t=1")
        #expect(response.headers["RateLimit-Policy"]?.hasPrefix("\"\(kind)\";q=") == true)
    }

    @Test("writes: the burst, then 429 that stores nothing, then tokens at the bucket's rate, never past the burst")
    func writes() throws {
        let clock = ManualClock()
        let api = try Self.fixture(clock) { $0.writes = BucketRate(perSecond: 2, burst: 3) }
        defer { api.stop() }
        let document = listDocument(sections: 1, items: 2)
        var remaining: [String?] = []
        for _ in 0..<3 {
            let response = try api.call("PUT", "/v1/lists/news", json: document, headers: Self.writer)
            #expect([200, 201].contains(response.status))
            #expect(response.headers["RateLimit-Policy"] == "\"writes\";q=2;w=1")
            remaining.append(response.headers["RateLimit"])
        }
        #expect(remaining == ["\"writes\";r=2;t=1", "\"writes\";r=1;t=1", "\"writes\";r=0;t=1"])
        #expect(api.service.registry.version(of: "news")?.version == 3)
        // Past the burst: refused before the write lane, so the list keeps its version.
        try Self.expectRefused(
            try api.call("PUT", "/v1/lists/news", json: document, headers: Self.writer), kind: "writes")
        try Self.expectRefused(
            try api.call(
                "POST", "/v1/lists/news/ops", json: ["ops": [["op": "delete", "at": [0, 0]]]],
                headers: Self.writer), kind: "writes")
        try Self.expectRefused(try api.call("DELETE", "/v1/lists/news", headers: Self.writer), kind: "writes")
        #expect(api.service.registry.version(of: "news")?.version == 3)
        #expect(api.listIDs("news").count == 2)
        #expect(try Self.metric(api, #"quire_rate_limited_total{kind="writes"} 3"#))
        // Half a second at 2 a second: one token.
        clock.advance(0.5)
        let refilled = try api.call("PUT", "/v1/lists/news", json: document, headers: Self.writer)
        #expect(refilled.status == 200)
        #expect(refilled.headers["RateLimit"] == "\"writes\";r=0;t=1")
        try Self.expectRefused(
            try api.call("PUT", "/v1/lists/news", json: document, headers: Self.writer), kind: "writes")
        // A long quiet time fills the bucket to its burst, no further.
        clock.advance(3_600)
        for expected in [2, 1, 0] {
            let response = try api.call("PUT", "/v1/lists/news", json: document, headers: Self.writer)
            #expect(response.headers["RateLimit"] == "\"writes\";r=\(expected);t=1")
        }
        try Self.expectRefused(
            try api.call("PUT", "/v1/lists/news", json: document, headers: Self.writer), kind: "writes")
        #expect(api.service.registry.version(of: "news")?.version == 7)
    }

    @Test("reads: pages and the index share the bucket; operations endpoints are never limited")
    func reads() throws {
        let clock = ManualClock()
        let api = try Self.fixture(clock) { $0.reads = BucketRate(perSecond: 10, burst: 2) }
        defer { api.stop() }
        try api.put("news", listDocument(sections: 1, items: 3), headers: Self.writer)
        // The same page twice: the second is the prepared answer from the page cache, with its fields added.
        for expected in [1, 0] {
            let page = try api.call("GET", "/v1/lists/news?limit=2")
            #expect(page.status == 200)
            #expect(page.headers["RateLimit-Policy"] == "\"reads\";q=10;w=1")
            #expect(page.headers["RateLimit"] == "\"reads\";r=\(expected);t=1")
            #expect(page.headers["ETag"] != nil)
        }
        try Self.expectRefused(try api.call("GET", "/v1/lists"), kind: "reads")
        for path in ["/healthz", "/readyz", "/metrics", "/openapi.yaml"] {
            for _ in 0..<3 {
                let response = try api.call("GET", path)
                #expect(response.status == 200, "\(path)")
                #expect(response.headers["RateLimit"] == nil, "\(path)")
            }
        }
        // The producer's token is another client: its reads are its own.
        #expect(try api.call("GET", "/v1/lists", headers: Self.writer).headers["RateLimit"] == "\"reads\";r=1;t=1")
        // A tenth of a second at 10 a second: one more read.
        clock.advance(0.1)
        #expect(try api.call("GET", "/v1/lists/news?limit=2").status == 200)
        try Self.expectRefused(try api.call("GET", "/v1/lists/news?limit=2"), kind: "reads")
        #expect(try Self.metric(api, #"quire_rate_limited_total{kind="reads"} 2"#))
        #expect(try Self.metric(api, #"quire_rate_limited_total{kind="writes"} 0"#))
    }

    @Test("sessions: a refused creation holds nothing; the session's answers and stream draw on reads")
    func sessions() throws {
        let clock = ManualClock()
        let api = try Self.fixture(clock) { $0.sessions = BucketRate(perSecond: 1, burst: 1) }
        defer { api.stop() }
        try api.put("news", listDocument(sections: 1, items: 3), headers: Self.writer)
        let created = try api.call("POST", "/v1/lists/news/sessions", json: ["limit": 2])
        #expect(created.status == 201)
        #expect(created.headers["RateLimit-Policy"] == "\"sessions\";q=1;w=1")
        #expect(created.headers["RateLimit"] == "\"sessions\";r=0;t=1")
        let session = try #require(try created.object()["session"] as? String)
        try Self.expectRefused(try api.call("POST", "/v1/lists/news/sessions", json: ["limit": 2]), kind: "sessions")
        #expect(api.service.context.sessions.count == 1)
        #expect(try Self.metric(api, "quire_sessions_active 1"))
        #expect(try Self.metric(api, #"quire_rate_limited_total{kind="sessions"} 1"#))
        let changes = try api.call("GET", "/v1/sessions/\(session)/changes?since=1")
        #expect(changes.status == 200)
        #expect(changes.headers["RateLimit-Policy"] == "\"reads\";q=200;w=1")
        let stream = try EventStreamReader(port: api.server.port, target: "/v1/sessions/\(session)/events")
        defer { stream.close() }
        try stream.readHead()
        #expect(stream.status == 200)
        #expect(stream.headers["ratelimit"] == "\"reads\";r=398;t=1")
        clock.advance(1)
        #expect(try api.call("POST", "/v1/lists/news/sessions", json: ["limit": 2]).status == 201)
    }

    @Test("a client is its token's sub, else its static token")
    func keys() async throws {
        let settings = TestTokens.settings()
        let keys = try await TokenKeys.load(settings)
        let clock = ManualClock()
        let api = try APIFixture(keys: keys, rateLimitClock: clock.clock) {
            $0.jwt = settings
            $0.writeToken = "writer"
            $0.readToken = "reader"
            $0.rateLimits.enabled = true
            $0.rateLimits.reads = BucketRate(perSecond: 1, burst: 2)
        }
        defer { api.stop() }
        try api.put("news", listDocument(sections: 1, items: 3), headers: Self.writer)
        // Two tokens of Alice's (other scopes, other lifetimes) are one client; Bob is another.
        let alice = bearer(try await TestTokens.hs256(TestTokens.claims(sub: "alice", scope: "read:*")))
        let alice2 = bearer(try await TestTokens.hs256(TestTokens.claims(sub: "alice", scope: "read:news")))
        let bob = bearer(try await TestTokens.hs256(TestTokens.claims(sub: "bob", scope: "read:*")))
        #expect(try api.call("GET", "/v1/lists/news", headers: alice).headers["RateLimit"] == "\"reads\";r=1;t=1")
        #expect(try api.call("GET", "/v1/lists/news", headers: alice2).headers["RateLimit"] == "\"reads\";r=0;t=1")
        try Self.expectRefused(try api.call("GET", "/v1/lists/news", headers: alice), kind: "reads")
        #expect(try api.call("GET", "/v1/lists/news", headers: bob).status == 200)
        // The static tokens are a client each, whatever address they come from.
        let reader = [("Authorization", "Bearer reader")]
        #expect(try api.call("GET", "/v1/lists/news", headers: reader, sourceHost: "127.0.0.2").status == 200)
        #expect(try api.call("GET", "/v1/lists/news", headers: reader, sourceHost: "127.0.0.3").status == 200)
        try Self.expectRefused(try api.call("GET", "/v1/lists/news", headers: reader), kind: "reads")
        #expect(try api.call("GET", "/v1/lists/news", headers: Self.writer).status == 200)
        let limiter = try #require(api.service.context.rateLimiter)
        #expect(limiter.isTracking(.subject("alice")))
        #expect(limiter.isTracking(.readToken))
        #expect(limiter.isTracking(.subject("bob")))
        #expect(limiter.isTracking(.writeToken))
        // With tokens required, no request was keyed by its address.
        #expect(!limiter.isTracking(.address(.v4(127, 0, 0, 2))))
        #expect(limiter.trackedClients == 4)
    }

    @Test("without a token a client is its address; past rateLimits.clients the least recently seen is forgotten")
    func bound() throws {
        let clock = ManualClock()
        let api = try Self.fixture(clock) {
            $0.clients = 2
            $0.reads = BucketRate(perSecond: 1, burst: 1)
        }
        defer { api.stop() }
        try api.put("news", listDocument(sections: 1, items: 3), headers: Self.writer)
        let limiter = try #require(api.service.context.rateLimiter)
        // The write token is tracked; .2 then takes the second place.
        #expect(try api.call("GET", "/v1/lists/news", sourceHost: "127.0.0.2").status == 200)
        try Self.expectRefused(try api.call("GET", "/v1/lists/news", sourceHost: "127.0.0.2"), kind: "reads")
        #expect(limiter.trackedClients == 2)
        // .3 is new: the write token, seen least recently, is forgotten; .2 is still refused.
        #expect(try api.call("GET", "/v1/lists/news", sourceHost: "127.0.0.3").status == 200)
        #expect(!limiter.isTracking(.writeToken))
        try Self.expectRefused(try api.call("GET", "/v1/lists/news", sourceHost: "127.0.0.2"), kind: "reads")
        // .4 makes .3 the one forgotten (.2 was seen since): .3 comes back with a full bucket.
        #expect(try api.call("GET", "/v1/lists/news", sourceHost: "127.0.0.4").status == 200)
        #expect(!limiter.isTracking(.address(.v4(127, 0, 0, 3))))
        #expect(limiter.isTracking(.address(.v4(127, 0, 0, 2))))
        #expect(try api.call("GET", "/v1/lists/news", sourceHost: "127.0.0.3").status == 200)
        #expect(limiter.trackedClients == 2)
        #expect(try Self.metric(api, "quire_rate_limit_clients_tracked 2"))
    }

    @Test("limits off: no fields, no refusals")
    func off() throws {
        let api = try APIFixture { $0.writeToken = "writer" }
        defer { api.stop() }
        #expect(api.service.context.rateLimiter == nil)
        try api.put("news", listDocument(sections: 1, items: 3), headers: Self.writer)
        for _ in 0..<50 {
            let page = try api.call("GET", "/v1/lists/news?limit=1")
            #expect(page.status == 200)
            #expect(page.headers["RateLimit"] == nil)
        }
        #expect(try Self.metric(api, "quire_rate_limit_clients_tracked 0"))
    }

    @Test("the table: the client seen last is drawn on without a lookup, and least-recently-seen order holds")
    func tableRecency() {
        var settings = RateLimitSettings()
        settings.reads = BucketRate(perSecond: 1, burst: 2)
        var table = RateLimitTable(capacity: 2)
        let (alice, bob, carol) = (
            RateLimitClient.subject("alice"), RateLimitClient.subject("bob"), RateLimitClient.readToken
        )
        #expect(table.draw(.reads, for: alice, at: 0, settings: settings).remaining == 1)
        // Alice again, the newest: her own bucket is drawn on, not a fresh one.
        #expect(table.draw(.reads, for: alice, at: 0, settings: settings).remaining == 0)
        #expect(!table.draw(.reads, for: alice, at: 0, settings: settings).allowed)
        #expect(table.draw(.reads, for: bob, at: 0, settings: settings).remaining == 1)
        // Alice seen after Bob: Carol, new past the capacity, takes Bob's place.
        #expect(!table.draw(.reads, for: alice, at: 0.5, settings: settings).allowed)
        #expect(table.draw(.reads, for: carol, at: 0.5, settings: settings).allowed)
        #expect(table.contains(alice) && table.contains(carol) && !table.contains(bob))
        #expect(table.count == 2)
        // A second later Alice has one token again (refilled, not reset).
        #expect(table.draw(.reads, for: alice, at: 1.5, settings: settings).remaining == 0)
    }

    @Test("clients spread over the shards by their cheap hash")
    func shardHash() {
        var seen = Set<Int>()
        for host in 0..<256 { seen.insert(RateLimitClient.address(.v4(10, 0, 0, UInt8(host))).shardHash & 63) }
        for name in 0..<256 { seen.insert(RateLimitClient.subject("user-\(name)").shardHash & 63) }
        #expect(seen.count == 64)
    }
}
