import Glibc
import Logging
import Synchronization

/// Bootstraps swift-log once: human-readable lines on standard error, or one JSON object per line.
enum LogSetup {
    static func bootstrap(level: Logger.Level, format: Settings.LogFormat) {
        let clock = LogClock()
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label, format: format, clock: clock)
            handler.logLevel = level
            return handler
        }
    }
}

/// Writes each log record as one line on standard error, with one `write(2)`: lines from concurrent
/// threads never interleave, and nothing is buffered that a crash could lose.
///
/// The access log writes a line per request, so this is on the hot path: it formats straight into
/// bytes, reuses the timestamp's text within a second, and takes no lock. (swift-log's
/// `StreamLogHandler` costs more than half the throughput of a small request: `localtime` stats
/// `/etc/localtime` on every call, and each line is sorted, joined and flushed through stdio.)
///
/// - `text`: `2026-11-21T17:00:59+0000 info quire: key=value … [Module] message`, as swift-log's
///   `StreamLogHandler` writes it.
/// - `json`: `{"time":"2026-11-21T17:00:59.517Z","level":"info","label":"quire","message":"…",<metadata>}`,
///   metadata keys sorted, values as strings.
struct LineLogHandler: LogHandler {
    let label: String
    let format: Settings.LogFormat
    let clock: LogClock
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let line = self.line(for: event, at: clock.now())
        line.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return  // standard error is gone: nothing better to do with a log line
                }
            }
        }
    }

    /// The line for `event`, newline included.
    func line(for event: LogEvent, at time: LogClock.Stamp) -> [UInt8] {
        var fields = metadata
        if let explicit = event.metadata { fields.merge(explicit) { $1 } }
        if let error = event.error {
            fields["error.message"] = "\(error)"
            fields["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        let sorted = fields.sorted { $0.key < $1.key }
        var line: [UInt8] = []
        line.reserveCapacity(160 + sorted.count * 24)
        switch format {
        case .text:
            line += time.local.utf8
            line.append(UInt8(ascii: " "))
            line += event.level.rawValue.utf8
            if !label.isEmpty { line.append(UInt8(ascii: " ")) }
            line += label.utf8
            line.append(UInt8(ascii: ":"))
            for (key, value) in sorted {
                line.append(UInt8(ascii: " "))
                line += key.utf8
                line.append(UInt8(ascii: "="))
                line += value.description.utf8
            }
            line += " [".utf8
            line += event.source.utf8
            line += "] ".utf8
            line += event.message.description.utf8
        case .json:
            line += #"{"time":""#.utf8
            line += time.utc.utf8
            line += #"","level":""#.utf8
            line += event.level.rawValue.utf8
            line += #"","label":"#.utf8
            Self.appendJSONString(label, to: &line)
            line += #","message":"#.utf8
            Self.appendJSONString(event.message.description, to: &line)
            for (key, value) in sorted where !Self.jsonFixedKeys.contains(key) {
                line.append(UInt8(ascii: ","))
                Self.appendJSONString(key, to: &line)
                line.append(UInt8(ascii: ":"))
                Self.appendJSONString(value.description, to: &line)
            }
            line.append(UInt8(ascii: "}"))
        }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// The members every JSON line starts with; metadata of the same names is left out.
    static let jsonFixedKeys: Set<String> = ["time", "level", "label", "message"]
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped.
    static func appendJSONString(_ text: String, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "\""))
        defer { line.append(UInt8(ascii: "\"")) }
        let needsEscaping = text.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        guard needsEscaping else {
            line += text.utf8
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): line += #"\""#.utf8
            case UInt8(ascii: "\\"): line += #"\\"#.utf8
            case UInt8(ascii: "\n"): line += #"\n"#.utf8
            case UInt8(ascii: "\r"): line += #"\r"#.utf8
            case UInt8(ascii: "\t"): line += #"\t"#.utf8
            case 0..<0x20:
                line += #"\u00"#.utf8
                line.append(hexDigits[Int(byte >> 4)])
                line.append(hexDigits[Int(byte & 0xF)])
            default: line.append(byte)
            }
        }
    }
}

/// The log lines' timestamps: the local one of the text format (to the second, with the UTC offset) and
/// the UTC one of the JSON format (to the millisecond). The text of the current second is computed once
/// and shared by every thread.
final class LogClock: Sendable {
    struct Stamp {
        /// `2026-11-21T17:00:59+0000`
        let local: String
        /// `2026-11-21T17:00:59.517Z`
        let utc: String
    }

    private let cached = Mutex<(second: Int, local: String, utc: String)?>(nil)

    func now() -> Stamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return stamp(seconds: time.tv_sec, milliseconds: time.tv_nsec / 1_000_000)
    }

    func stamp(seconds: Int, milliseconds: Int) -> Stamp {
        let (local, utc) =
            cached.withLock { cached -> (String, String)? in
                guard let cached, cached.second == seconds else { return nil }
                return (cached.local, cached.utc)
            } ?? format(seconds)
        let millis = String(milliseconds)
        return Stamp(local: local, utc: utc + "." + String(repeating: "0", count: 3 - millis.count) + millis + "Z")
    }

    private func format(_ seconds: Int) -> (String, String) {
        var time = seconds
        var parts = tm()
        localtime_r(&time, &parts)
        let local = Self.strftime("%Y-%m-%dT%H:%M:%S%z", &parts)
        gmtime_r(&time, &parts)
        let utc = Self.strftime("%Y-%m-%dT%H:%M:%S", &parts)
        cached.withLock { $0 = (seconds, local, utc) }
        return (local, utc)
    }

    private static func strftime(_ format: String, _ parts: inout tm) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = Glibc.strftime(&buffer, buffer.count, format, &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
