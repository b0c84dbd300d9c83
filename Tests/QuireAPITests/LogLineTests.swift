import Foundation
import Logging
import Testing

@testable import quire

/// The log lines of `quire serve`: the text format as swift-log's stream handler writes it, and JSON
/// objects that any JSON parser reads back, whatever the message holds.
@Suite("Log lines")
struct LogLineTests {
    static let stamp = LogClock.Stamp(local: "2026-11-21T17:00:59+0100", utc: "2026-11-21T17:00:59.007Z")

    static func event(_ message: Logger.Message, metadata: Logger.Metadata? = nil) -> LogEvent {
        LogEvent(
            level: .info, message: message, metadata: metadata, source: "QuireAPI", file: #fileID,
            function: #function, line: #line)
    }

    @Test("text: timestamp, level, label, sorted metadata, source, message")
    func text() {
        var handler = LineLogHandler(label: "quire", format: .text, clock: LogClock())
        handler[metadataKey: "log"] = "access"
        let line = handler.line(
            for: Self.event("request", metadata: ["status": "200", "method": "GET"]), at: Self.stamp)
        #expect(
            String(decoding: line, as: UTF8.self)
                == "2026-11-21T17:00:59+0100 info quire: log=access method=GET status=200 [QuireAPI] request\n")
        let bare = LineLogHandler(label: "quire", format: .text, clock: LogClock())
        #expect(
            String(decoding: bare.line(for: Self.event("listening"), at: Self.stamp), as: UTF8.self)
                == "2026-11-21T17:00:59+0100 info quire: [QuireAPI] listening\n")
    }

    @Test("JSON: one object per line, strings escaped, metadata as strings")
    func json() throws {
        let handler = LineLogHandler(label: "quire", format: .json, clock: LogClock())
        let message = "quote \" backslash \\ newline \n tab \t bell \u{07} é ✓"
        let line = handler.line(
            for: Self.event("\(message)", metadata: ["port": "8080", "nested": ["a": "1"]]), at: Self.stamp)
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: String])
        #expect(object["message"] == message)
        #expect(object["time"] == "2026-11-21T17:00:59.007Z")
        #expect(object["level"] == "info")
        #expect(object["label"] == "quire")
        #expect(object["port"] == "8080")
        #expect(object["nested"] != nil)
    }

    @Test("timestamps: local with its offset, UTC to the millisecond, reused within a second")
    func timestamps() throws {
        let clock = LogClock()
        let first = clock.stamp(seconds: 1_795_280_459, milliseconds: 7)
        #expect(first.utc == "2026-11-21T17:00:59.007Z")
        #expect(clock.stamp(seconds: 1_795_280_459, milliseconds: 999).utc == "2026-11-21T17:00:59.999Z")
        #expect(clock.stamp(seconds: 1_795_280_460, milliseconds: 0).utc == "2026-11-21T17:01:00.000Z")
        #expect(first.local.count == "2026-11-21T16:00:59+0000".count)
        let now = clock.now()
        #expect(now.utc.hasSuffix("Z"))
    }
}
