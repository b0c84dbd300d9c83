import Foundation
import Logging
import QuireCore
import QuireHTTP
import QuireTesting
import QuireVersion
import Synchronization
import Testing

@testable import QuireAPI
@testable import QuireAuth

/// Request ids, the access log and /metrics.
@Suite("Observability")
struct ObservabilityTests {
    @Test("X-Request-Id: the client's echoed on every response; a generated one on the responses made per request")
    func requestID() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3))
        // prepared (sent from memory as they are), cached page, problem, a session answer
        for (target, method, isPrepared) in [
            ("/healthz", "GET", true), ("/v1/lists/l", "GET", true), ("/nope", "GET", false),
            ("/v1/lists/l/sessions", "POST", false),
        ] {
            let given = try api.call(method, target, headers: [("X-Request-Id", "client-id.1_2")])
            #expect(given.headers["X-Request-Id"] == "client-id.1_2")
            let generated = try api.call(method, target)
            let malformed = try api.call(method, target, headers: [("X-Request-Id", "bad id with spaces")])
            if isPrepared {
                #expect(generated.headers["X-Request-Id"] == nil)
                #expect(malformed.headers["X-Request-Id"] == nil)
            } else {
                let id = try #require(generated.headers["X-Request-Id"])
                #expect(id.count == 15 && id.allSatisfy(\.isHexDigit))
                #expect(malformed.headers["X-Request-Id"]?.count == 15)
            }
        }
    }

    @Test("/metrics: requests by route and status, latency histograms, store writes, sessions, long polls")
    func metrics() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3))
        _ = try SessionClient(api, list: "l")
        _ = try api.call("GET", "/v1/lists/l?limit=1")
        _ = try api.call("GET", "/v1/lists/ghost")
        // Methods no route knows are counted together: a client cannot add series by inventing methods.
        #expect(try api.call("FROB", "/healthz").status == 405)
        #expect(try api.call("BREW", "/healthz").status == 405)
        let text = try api.call("GET", "/metrics").text
        #expect(text.contains(#"quire_http_requests_total{method="OTHER",route="/healthz",status="405"} 2"#))
        #expect(!text.contains(#"method="FROB""#) && !text.contains(#"method="BREW""#))
        #expect(text.contains(#"quire_http_requests_total{method="GET",route="/v1/lists/{list}",status="200"} 1"#))
        #expect(text.contains(#"quire_http_requests_total{method="GET",route="/v1/lists/{list}",status="404"} 1"#))
        #expect(text.contains(#"quire_http_requests_total{method="PUT",route="/v1/lists/{list}",status="201"} 1"#))
        #expect(text.contains(#"quire_http_request_duration_seconds_bucket{route="/v1/lists/{list}""#))
        #expect(text.contains("quire_store_write_duration_seconds_count 1"))
        #expect(text.contains("quire_store_commits_total 1"))
        #expect(text.contains("quire_sessions_active 1"))
        #expect(text.contains("quire_lists_resident 1"))
        #expect(text.contains("quire_items_resident 3"))
        #expect(text.contains("quire_long_polls_waiting 0"))
        #expect(text.contains("quire_http_connections_open "))  // at least the scrape's own; others may be closing
        #expect(text.contains("quire_http_connections_refused_total 0"))
        #expect(text.contains("quire_http_requests_cut_total 0"))
        #expect(text.contains(#"quire_build_info{version="\#(Release.version)"} 1"#))
    }

    @Test(
        "a route's latency histogram: `le` inclusive, counts cumulative, +Inf, sum and count as the registry writes them"
    )
    func routeLatencyHistogram() {
        let latency = RouteLatency()
        for elapsed: Duration in [
            .microseconds(50), .microseconds(100), .microseconds(101), .milliseconds(2), .seconds(90),
        ] {
            latency.record(elapsed)
        }
        var out: [UInt8] = []
        latency.write(name: "h", route: #"/a"b\c"#, into: &out)
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n").map(String.init)
        let label = #"route="/a\"b\\c""#
        #expect(lines.count == 15)
        #expect(lines[0] == #"h_bucket{\#(label),le="0.0001"} 2"#)  // 50 µs, and 100 µs on the bound
        #expect(lines[1] == #"h_bucket{\#(label),le="0.0005"} 3"#)
        #expect(lines[3] == #"h_bucket{\#(label),le="0.005"} 4"#)
        #expect(lines[11] == #"h_bucket{\#(label),le="60.0"} 4"#)
        #expect(lines[12] == #"h_bucket{\#(label),le="+Inf"} 5"#)
        #expect(lines[13] == #"h_sum{\#(label)} 90.002251"#)
        #expect(lines[14] == #"h_count{\#(label)} 5"#)
    }

    @Test("/metrics counts connections refused past the per-IP limit")
    func refusedConnections() throws {
        let api = try APIFixture { $0.http.perIPConnectionLimit = 2 }
        defer { api.stop() }
        let held = try (0..<2).map { _ in try api.server.connect() }
        for connection in held { #expect(try connection.request("GET", "/healthz").status == 200) }
        let extra = try api.server.connect(timeoutSeconds: 2)
        #expect((try? extra.request("GET", "/healthz")) == nil)
        held[1].close()
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        var text = ""
        repeat {
            text = (try? held[0].request("GET", "/metrics").text) ?? ""
        } while !text.contains("quire_http_connections_refused_total 1") && clock.now < deadline
        #expect(text.contains("quire_http_connections_refused_total 1"))
    }

    @Test("a refused framing is a problem document of openapi.yaml, counted by reason in /metrics")
    func framingRefusals() throws {
        let api = try APIFixture()
        defer { api.stop() }
        let connection = try api.server.connect()
        try connection.write(
            Array("POST /v1/lists/l/ops HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n".utf8))
        let refused = try connection.readResponse()
        #expect(refused.status == 501)
        let problem = try ProblemDocument(refused.body)
        #expect(problem.type == "https://quire.dev/problems/not-implemented")
        let folded = try api.server.connect()
        try folded.write(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n".utf8))
        let second = try folded.readResponse()
        #expect(second.status == 400)
        #expect(try ProblemDocument(second.body).type == "https://quire.dev/problems/invalid-request")
        let text = try api.call("GET", "/metrics").text
        #expect(text.contains(#"quire_http_framing_refusals_total{reason="unknown-transfer-coding"} 1"#))
        #expect(text.contains(#"quire_http_framing_refusals_total{reason="obsolete-line-folding"} 1"#))
        #expect(text.contains(#"quire_http_framing_refusals_total{reason="host"} 0"#))
        #expect((try? api.call("GET", "/v1/lists/l"))?.status == 404)  // the rejected write changed nothing
    }

    @Test("one access-log line per request: method, route template, status, duration, bytes, request id")
    func accessLog() throws {
        let (service, server, lines) = try LogLines.service()
        defer { service.shutdown() }
        _ = try server.request("GET", "/v1/lists/missing", headers: [("X-Request-Id", "trace-7")])
        let line = try #require(lines.all.last { $0["log"] == "access" })
        #expect(line["method"] == "GET")
        #expect(line["route"] == "/v1/lists/{list}")
        #expect(line["status"] == "404")
        #expect(line["request_id"] == "trace-7")
        #expect(line["bytes"].map { "\($0)" }.flatMap(Int.init) ?? 0 > 0)
        #expect(line["duration_ms"] != nil)
    }
}

/// The metadata of every record a ``CapturingLogHandler`` saw.
final class LogLines: Sendable {
    private let lines = Mutex<[Logger.Metadata]>([])

    func append(_ line: Logger.Metadata) { lines.withLock { $0.append(line) } }

    var all: [Logger.Metadata] { lines.withLock { $0 } }

    /// A started service (no demo list) whose log records go to the lines returned, with a client of it.
    static func service() throws -> (QuireService, TestServer, LogLines) {
        let lines = LogLines()
        var logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .info
        var configuration = QuireService.Configuration.testing
        configuration.demo.seed = false
        let service = QuireService(configuration: configuration, logger: logger)
        try service.startAndLoad()
        return (service, try TestServer(running: service.server), lines)
    }
}

/// Keeps the metadata of every record.
struct CapturingLogHandler: LogHandler {
    let lines: LogLines
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.append(merged)
    }
}
