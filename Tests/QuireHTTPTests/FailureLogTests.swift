import Testing

@testable import QuireHTTP

/// The rate limit on repeated log lines (libmicrohttpd's messages, accept failures): a flood of
/// refused connections must not become a flood of log lines.
@Suite("Repeated log lines")
struct FailureLogTests {
    @Test("the first is logged, repeats within a second are counted, the next one logged carries the count")
    func oncePerSecond() {
        var log = FailureLog()
        let start = ContinuousClock.now
        #expect(log.record(now: start) == 0)
        #expect(log.record(now: start + .milliseconds(10)) == nil)
        #expect(log.record(now: start + .milliseconds(999)) == nil)
        #expect(log.record(now: start + .milliseconds(1_000)) == 2)
        #expect(log.record(now: start + .milliseconds(1_500)) == nil)
        #expect(log.record(now: start + .milliseconds(2_000)) == 1)
        #expect(log.record(now: start + .seconds(60)) == 0)
    }
}
