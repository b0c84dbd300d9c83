import Foundation
import QuireClient
import QuireCore
import QuireHTTP
import QuireTesting
import Testing

@testable import QuireAPI

/// The Swift SDK against a real server whose rate limits are on: a `429` and a `503`, each with `Retry-After`, are
/// waited out and the same request sent again, on the same session, without an error reaching the app.
@Suite("Swift SDK under rate limits", .serialized, .timeLimit(.minutes(2)))
struct SDKRateLimitTests {
    @Test("an app call refused 429, then 503, each with Retry-After: waited out, the session kept")
    func keepsSession() async throws {
        let clock = ManualClock()
        let fixture = try APIFixture(rateLimitClock: clock.clock) {
            $0.rateLimits.enabled = true
            $0.rateLimits.reads = BucketRate(perSecond: 1, burst: 3)
        }
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 100))
        // Long polls: the SDK's poll is parked, so that only the app's calls and this test draw on the bucket.
        let session = SDKTests.client(fixture).session(
            list: "feed", options: QuireSession.Options(limit: 10, transport: .longPolls, longPollWait: 30))
        try await session.open()
        let id = try #require(await session.sessionID)
        let deadline = ContinuousClock.now + .seconds(20)
        while fixture.service.context.longPolls.count < 1 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(fixture.service.context.longPolls.count == 1)
        // The test shares the SDK's address, so its reads empty the SDK's bucket: the next page is refused 429
        // until the clock gives tokens again, a second and more after the refusal.
        while try fixture.call("GET", "/v1/lists").status == 200 {}
        let refill = Task {
            try await Task.sleep(for: .milliseconds(1_500))
            clock.advance(60)
        }
        try await session.loadNext()
        try await refill.value
        #expect(await session.sessionID == id)
        #expect(await session.window.sections.first?.items.count == 20)
        let waits = await session.statistics.retryAfterWaits
        #expect(waits >= 1)
        let metrics = try fixture.call("GET", "/metrics").text
        #expect(!metrics.contains(#"quire_rate_limited_total{kind="reads"} 0"#))
        // The service says it is starting (503 overloaded, Retry-After: 1) for a second and more.
        fixture.service.readiness.set(.starting)
        let ready = Task {
            try await Task.sleep(for: .milliseconds(1_500))
            fixture.service.readiness.set(.ready)
        }
        try await session.loadNext()
        try await ready.value
        #expect(await session.sessionID == id)
        #expect(await session.window.sections.first?.items.count == 30)
        #expect(await session.statistics.retryAfterWaits > waits)
        #expect(await session.statistics.sessionsOpened == 1)
        // Catching up takes the SDK requests of its own (the long poll's answers, the polls made again): the manual
        // clock refills the bucket as a real one would meanwhile, or its Retry-After would never pass.
        let ticking = Task {
            while !Task.isCancelled {
                clock.advance(1)
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try await SDKTests.converge(session, fixture)
        ticking.cancel()
        #expect(await session.window == (try fixture.freshWindow(ofSession: id)))
        await session.close()
    }
}
