import Foundation
import Logging
import QuireCore
import QuireTesting
import Testing

@testable import QuireAPI
@testable import QuireHTTP

/// W3C `traceparent`: read from each request (a fresh id without a valid one), in the access log and in every
/// `5xx` problem.
@Suite("Trace context")
struct TraceContextTests {
    static let given = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    static let givenTrace = "4bf92f3577b34da6a3ce929d0e0e4736"

    static func parsed(_ value: String) -> TraceID? {
        Array(value.utf8).withUnsafeBufferPointer { TraceContext.parse($0) }
    }

    @Test("traceparent: the W3C format's valid values give their trace id, any other none")
    func parsing() {
        #expect(Self.parsed(Self.given)?.text == Self.givenTrace)
        #expect(Self.parsed("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later")?.text == Self.givenTrace)
        for invalid in [
            "", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // uppercase
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // a zero trace id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // a zero parent id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",  // version 00 is 55 bytes
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",  // a later version's fields follow a dash
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        ] {
            #expect(Self.parsed(invalid) == nil, "\(invalid)")
        }
        let fresh = (0..<4).map { _ in TraceID.fresh() }
        #expect(Set(fresh.map(\.text)).count == 4)
        #expect(fresh.allSatisfy { !$0.isNone && $0.text.count == 32 && $0.text.allSatisfy(\.isHexDigit) })
    }

    @Test("the access log line names the request's trace id; an invalid or missing traceparent gets a fresh one")
    func accessLogLine() throws {
        let (service, server, lines) = try LogLines.service()
        defer { service.shutdown() }
        func traceOfLastLine(_ headers: [(String, String)]) throws -> String {
            _ = try server.request("GET", "/v1/lists/missing", headers: headers)
            let line = try #require(lines.all.last { $0["log"] == "access" })
            return try #require(line["trace_id"].map { "\($0)" })
        }
        #expect(try traceOfLastLine([("traceparent", Self.given)]) == Self.givenTrace)
        let invalid = "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"
        let fresh = try [traceOfLastLine([("traceparent", invalid)]), traceOfLastLine([])]
        for trace in fresh {
            #expect(trace.count == 32 && trace.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(trace != Self.givenTrace && trace != invalid.split(separator: "-")[1].lowercased())
        }
        #expect(fresh[0] != fresh[1])
    }

    @Test("a 5xx problem document carries the request's trace id, a 4xx none")
    func serverErrorProblem() throws {
        var configuration = QuireService.Configuration()
        configuration.http.port = 0
        configuration.demo.seed = false
        // Listening before its lists are loaded, the service answers /v1 with 503 overloaded.
        let service = QuireService(configuration: configuration, logger: TestServer.logger)
        try service.start()
        defer { service.shutdown() }
        let server = try TestServer(running: service.server)
        let traced = try server.request("GET", "/v1/lists/l", headers: [("traceparent", Self.given)])
        #expect(traced.status == 503)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(traced.body)) as? [String: Any])
        #expect(document["traceId"] as? String == Self.givenTrace)
        #expect(document["type"] as? String == "https://quire.dev/problems/overloaded")
        let fresh = try server.request("GET", "/v1/lists")
        #expect(fresh.status == 503)
        let freshDocument = try #require(try JSONSerialization.jsonObject(with: Data(fresh.body)) as? [String: Any])
        #expect((freshDocument["traceId"] as? String)?.count == 32)
        let notFound = try server.request("GET", "/nowhere", headers: [("traceparent", Self.given)])
        #expect(notFound.status == 404)
        #expect(!notFound.text.contains("traceId"))
    }

    @Test("a deferred response is adjusted whether it was resolved before the responder's adjustment or after")
    func deferredAdjustment() {
        let problem = Problem.overloaded("busy", retryAfterSeconds: 1).response
        let trace = TraceID(high: 1, low: 2)
        for resolvedFirst in [true, false] {
            var machine = DeferredStateMachine()
            if resolvedFirst { _ = machine.resolve(with: problem) }
            machine.adjust { Problem.naming(trace, in: $0) }
            if !resolvedFirst { _ = machine.resolve(with: problem) }
            guard case .resolvedEarly(let response) = machine.state else {
                Issue.record("not resolved")
                continue
            }
            #expect(String(decoding: response.body, as: UTF8.self).hasSuffix(#","traceId":"\#(trace.text)"}"#))
        }
    }
}
