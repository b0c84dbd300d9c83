import Foundation
import Glibc
import Logging
import QuireHTTP
import Synchronization
import Testing

@testable import QuireAPI
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

/// The buffered access log: the same lines as the logger's handler, bounded, and nothing lost on close.
@Suite("Buffered access log")
struct BufferedAccessLogTests {
    static let record = AccessRecord(
        method: "GET", route: "/v1/lists/{list}", status: 200, elapsed: .microseconds(1_234), bytes: 512,
        requestID: "abc-1", subject: "user \"7\"\n",
        traceID: TraceID(high: 0x4bf9_2f35_77b3_4da6, low: 0x0a3c_e929_d0e0_e473))
    static let second = (local: "2026-11-21T17:00:59+0100", utc: "2026-11-21T17:00:59")

    @Test("a line equals what LineLogHandler writes for the same fields", arguments: LogFormat.allCases)
    func sameLinesAsTheHandler(format: LogFormat) throws {
        let log = BufferedAccessLog(format: format, output: LogOutput(descriptor: -1))
        defer { log.close() }
        var line: [UInt8] = []
        log.append(Self.record, second: Self.second, millisecond: 7, to: &line)
        var metadata: Logger.Metadata = [
            "method": "GET", "route": "/v1/lists/{list}", "status": "200", "duration_ms": "1.234", "bytes": "512",
            "request_id": "abc-1", "trace_id": "4bf92f3577b34da60a3ce929d0e0e473",
        ]
        if format == .json { metadata["subject"] = "user \"7\"\n" } else { metadata["subject"] = "user \"7\"?" }
        #expect(String(decoding: line, as: UTF8.self) == Self.handlerLine(format, metadata, millisecond: "007"))
    }

    /// What `LineLogHandler` writes for an access record's `metadata`, at ``second`` and `millisecond`.
    static func handlerLine(_ format: LogFormat, _ metadata: Logger.Metadata, millisecond: String) -> String {
        var handler = LineLogHandler(label: "quire", format: format, clock: LogClock())
        handler[metadataKey: "log"] = "access"
        let line = handler.line(
            for: LogEvent(
                level: .info, message: "request", metadata: metadata, source: "QuireAPI", file: #fileID,
                function: #function, line: #line),
            at: LogClock.Stamp(local: second.local, utc: second.utc + ".\(millisecond)Z"))
        return String(decoding: line, as: UTF8.self)
    }

    /// Records for every branch of the line's formatting: short values, an overlong field (cut), values whose
    /// escaping fills the line's bound (JSON: six bytes a control character), with and without a subject.
    static let records: [AccessRecord] = [
        record,
        AccessRecord(
            method: "HEAD", route: "/healthz", status: 304, elapsed: .zero, bytes: 0, requestID: "0123456789abcde"),
        AccessRecord(
            method: "PUT", route: "/v1/lists/{list}", status: 599, elapsed: .seconds(3_600) + .microseconds(123),
            bytes: Int.max, requestID: String(repeating: "r", count: 128),
            subject: "x" + String(repeating: "\u{E9}", count: 150)),
        AccessRecord(
            method: String(repeating: "M", count: 300), route: "unmatched", status: 404, elapsed: .nanoseconds(999),
            bytes: 7, requestID: "id", subject: String(repeating: "\u{01}", count: 200)),
        AccessRecord(
            method: "GET", route: "/v1/sessions/{id}/changes", status: 200, elapsed: .milliseconds(-5), bytes: 42,
            requestID: "tab\there", subject: "\u{7F}del"),
    ]

    @Test(
        "every kind of record's line equals what LineLogHandler writes for the same fields",
        arguments: LogFormat.allCases, 0..<records.count)
    func everyRecordAsTheHandler(format: LogFormat, index: Int) throws {
        let record = Self.records[index]
        let log = BufferedAccessLog(format: format, output: LogOutput(descriptor: -1))
        defer { log.close() }
        var line: [UInt8] = []
        log.append(record, second: Self.second, millisecond: 42, to: &line)
        func field(_ value: String) -> String {
            let cut = String(decoding: value.utf8.prefix(256), as: UTF8.self)
            guard format == .text else { return cut }
            return String(decoding: cut.utf8.map { $0 < 0x20 || $0 == 0x7F ? UInt8(ascii: "?") : $0 }, as: UTF8.self)
        }
        let (seconds, attoseconds) = record.elapsed.components
        let microseconds = max(0, Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
        let fraction = String(microseconds % 1000)
        var metadata: Logger.Metadata = [
            "method": "\(field(record.method))", "route": "\(field(record.route))", "status": "\(record.status)",
            "duration_ms": "\(microseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count) + fraction)",
            "bytes": "\(record.bytes)", "request_id": "\(field(record.requestID))",
        ]
        if let subject = record.subject { metadata["subject"] = "\(field(subject))" }
        if !record.traceID.isNone { metadata["trace_id"] = "\(record.traceID.text)" }
        #expect(String(decoding: line, as: UTF8.self) == Self.handlerLine(format, metadata, millisecond: "042"))
    }

    /// A pipe: the log writes into `write`, the test reads `read`.
    static func pipe(size: Int32? = nil) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        precondition(Glibc.pipe(&ends) == 0)
        if let size { _ = fcntl(ends[1], 1031 /* F_SETPIPE_SZ */, size) }
        return (ends[0], ends[1])
    }

    static func readAll(_ descriptor: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("a blocked output drops and counts lines instead of blocking requests; close writes the rest")
    func boundedUnderOverload() throws {
        let (readEnd, writeEnd) = Self.pipe(size: 4096)
        let log = BufferedAccessLog(
            format: .text, output: LogOutput(descriptor: writeEnd), capacity: 8192, flushInterval: .milliseconds(10))
        let total = 20_000
        for index in 0..<total {  // nobody reads the pipe: the writer blocks, the buffer fills
            var record = Self.record
            record.requestID = "r\(index)"
            log.record(record)
        }
        let dropped = log.droppedLines
        #expect(dropped > 0)
        let text = Mutex("")
        let draining = DetachedThread.startJoinable { text.withLock { $0 = Self.readAll(readEnd) } }
        log.close()
        close(writeEnd)
        draining.join()
        close(readEnd)
        let lines = text.withLock { $0 }.split(separator: "\n")
        #expect(lines.count + dropped == total)
        #expect(lines.allSatisfy { $0.hasSuffix("[QuireAPI] request") })
    }

    @Test("lines are written at least every flush interval, without close")
    func flushedPeriodically() throws {
        let (readEnd, writeEnd) = Self.pipe()
        let log = BufferedAccessLog(
            format: .json, output: LogOutput(descriptor: writeEnd), flushInterval: .milliseconds(50))
        log.record(Self.record)
        var poll = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        #expect(Glibc.poll(&poll, 1, 10_000) == 1)  // arrives long before the 10 s bound, with no close
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(readEnd, &buffer, buffer.count)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(buffer[..<max(count, 0)])) as? [String: String])
        #expect(object["request_id"] == "abc-1")
        #expect(object["subject"] == "user \"7\"\n")
        log.close()
        close(writeEnd)
        close(readEnd)
    }

    @Test("records after close are written at once")
    func afterClose() {
        let (readEnd, writeEnd) = Self.pipe()
        let log = BufferedAccessLog(format: .text, output: LogOutput(descriptor: writeEnd))
        log.close()
        log.record(Self.record)
        close(writeEnd)
        #expect(Self.readAll(readEnd).contains("request_id=abc-1"))
        close(readEnd)
    }
}
