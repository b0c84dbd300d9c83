import Logging
import QuireAPI

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

/// Writes each log record as one line on standard error, with one `write(2)` (``LogOutput``): lines from
/// concurrent threads never interleave, nor with the access log's batches, and nothing is buffered that a
/// crash could lose. The access log of `quire serve` writes the same lines through ``BufferedAccessLog``.
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
        LogOutput.standardError.write(line(for: event, at: clock.now()))
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
            LogText.appendJSONString(label, to: &line)
            line += #","message":"#.utf8
            LogText.appendJSONString(event.message.description, to: &line)
            for (key, value) in sorted where !Self.jsonFixedKeys.contains(key) {
                line.append(UInt8(ascii: ","))
                LogText.appendJSONString(key, to: &line)
                line.append(UInt8(ascii: ":"))
                LogText.appendJSONString(value.description, to: &line)
            }
            line.append(UInt8(ascii: "}"))
        }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// The members every JSON line starts with; metadata of the same names is left out.
    static let jsonFixedKeys: Set<String> = ["time", "level", "label", "message"]
}
