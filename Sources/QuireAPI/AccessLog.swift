import Dispatch
import Glibc
public import Logging
import QuireHTTP
import Synchronization

/// What the access log says of one request: never the token, only its subject.
public struct AccessRecord: Sendable {
    public var method: String
    /// The route template (`/v1/lists/{list}`), or `unmatched`.
    public var route: String
    public var status: Int
    public var elapsed: Duration
    /// The body's bytes as sent.
    public var bytes: Int
    public var requestID: String
    /// The subject of the caller's token, if it had one.
    public var subject: String?

    public init(
        method: String, route: String, status: Int, elapsed: Duration, bytes: Int, requestID: String,
        subject: String? = nil
    ) {
        self.method = method
        self.route = route
        self.status = status
        self.elapsed = elapsed
        self.bytes = bytes
        self.requestID = requestID
        self.subject = subject
    }
}

/// Where access-log records go: one line per request, at `info`. A class, so that the metrics hold it as a
/// reference (an existential of a struct was copied per request).
public protocol AccessLog: AnyObject, Sendable {
    func record(_ record: AccessRecord)
    /// Lines dropped because the log could not keep up (see ``BufferedAccessLog``).
    var droppedLines: Int { get }
}

/// The access log through swift-log: an `info` record per request on a logger whose metadata says
/// `log=access`. For a service embedded in another program (and the tests), where that program's
/// logging is the place to look. It costs what the logger's handler costs, on the request's thread.
public final class LoggerAccessLog: AccessLog {
    private let logger: Logger

    public init(logger: Logger) {
        var logger = logger
        logger[metadataKey: "log"] = "access"
        self.logger = logger
    }

    public func record(_ record: AccessRecord) {
        logger.info(
            "request",
            metadata: {
                var metadata: Logger.Metadata = [
                    "method": "\(record.method)", "route": "\(record.route)", "status": "\(record.status)",
                    "duration_ms": "\(BufferedAccessLog.milliseconds(record.elapsed))", "bytes": "\(record.bytes)",
                    "request_id": "\(record.requestID)",
                ]
                if let subject = record.subject { metadata["subject"] = "\(subject)" }
                return metadata
            }())
    }

    public var droppedLines: Int { 0 }
}

/// The access log of `quire serve`, as nginx's `access_log … buffer= flush=`: a request formats its line
/// straight into a bounded buffer under a short lock (no allocation: the buffer's capacity is reserved
/// once) and returns; a thread of its own writes the buffer in one `write(2)` when it is half full and
/// at least every `flushInterval`. When the writer cannot keep up (a blocked standard error), lines are
/// dropped and counted (``droppedLines``, the `quire_access_log_dropped_lines_total` metric) rather than
/// slowing requests. ``close()`` writes every buffered line: a graceful shutdown loses none.
///
/// Lines are the ones swift-log's handler of `quire serve` writes for the same fields (`LineLogHandler`),
/// so a log reader sees one format. Hand-written rather than through swift-log because the access log is
/// on every request's path: through a `Logger` it cost a quarter of a small request's throughput (a
/// metadata dictionary, its sorting, and a `write(2)` per line).
public final class BufferedAccessLog: AccessLog {
    /// The default bound of buffered bytes (about 1,500 lines).
    public static let defaultCapacity = 256 * 1024
    /// The longest line: every field is bounded (methods and subjects are cut, request ids are at most 128
    /// bytes, routes are templates), so a line that fits under the capacity never grows the buffer.
    static let longestLine = 2048
    static let longestField = 256

    private struct State {
        var bytes: [UInt8]
        var dropped = 0
        var wakeSent = false
        var closed = false
        /// The texts of the second the last line was stamped in: reused, so a line takes no other lock.
        var stamp: (second: Int, local: String, utc: String) = (-1, "", "")
    }

    private let state: Mutex<State>
    private let format: LogFormat
    private let label: String
    private let output: LogOutput
    private let clock: LogClock
    private let capacity: Int
    private let flushInterval: Duration
    private let wake = DispatchSemaphore(value: 0)
    private let writer = Mutex<DetachedThread.Joinable?>(nil)

    /// Starts the writer thread; ``close()`` ends it.
    public init(
        format: LogFormat, label: String = "quire", output: LogOutput = .standardError,
        capacity: Int = defaultCapacity, flushInterval: Duration = .seconds(1), clock: LogClock = LogClock()
    ) {
        precondition(capacity > 0 && flushInterval > .zero)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity + Self.longestLine)
        state = Mutex(State(bytes: bytes))
        self.format = format
        self.label = label
        self.output = output
        self.clock = clock
        self.capacity = capacity
        self.flushInterval = flushInterval
        let thread = DetachedThread.startJoinable { [self] in run() }
        writer.withLock { $0 = thread }
    }

    public func record(_ record: AccessRecord) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let millisecond = now.tv_nsec / 1_000_000
        var fresh: (second: Int, local: String, utc: String)?  // the stamp of a new second, made outside the lock
        while true {
            let outcome = state.withLock { state -> Outcome in
                if let fresh { state.stamp = fresh }
                if state.closed { return .closed }
                guard state.stamp.second == now.tv_sec else { return .newSecond }
                guard state.bytes.count < capacity else {
                    state.dropped += 1
                    return .written
                }
                append(
                    record, second: (state.stamp.local, state.stamp.utc), millisecond: millisecond, to: &state.bytes)
                if state.bytes.count >= capacity / 2 && !state.wakeSent {
                    state.wakeSent = true
                    return .writtenPastHalf
                }
                return .written
            }
            switch outcome {
            case .written:
                return
            case .writtenPastHalf:
                wake.signal()
                return
            case .newSecond:
                let (local, utc) = clock.second(now.tv_sec)
                fresh = (now.tv_sec, local, utc)
            case .closed:  // after close: written at once, never lost
                var line: [UInt8] = []
                append(record, second: clock.second(now.tv_sec), millisecond: millisecond, to: &line)
                output.write(line)
                return
            }
        }
    }

    private enum Outcome {
        case written, writtenPastHalf, newSecond, closed
    }

    public var droppedLines: Int {
        state.withLock { $0.dropped }
    }

    /// Writes every buffered line and ends the writer thread; later records are written one by one.
    public func close() {
        guard
            let thread = writer.withLock({ writer in
                defer { writer = nil }; return writer
            })
        else { return }
        state.withLock { $0.closed = true }
        wake.signal()
        thread.join()
    }

    /// The writer: swaps the buffer for an empty one of the same capacity and writes the full one.
    private func run() {
        var spare: [UInt8] = []
        spare.reserveCapacity(capacity + Self.longestLine)
        let interval =
            Int(flushInterval.components.seconds) * 1_000_000_000
            + Int(flushInterval.components.attoseconds / 1_000_000_000)
        while true {
            _ = wake.wait(timeout: .now() + .nanoseconds(interval))
            let closed = state.withLock { state in
                swap(&state.bytes, &spare)
                state.wakeSent = false
                return state.closed
            }
            output.write(spare)
            spare.removeAll(keepingCapacity: true)
            if closed { return }
        }
    }

    /// One line, newline included, in the format of `LineLogHandler` for these fields (metadata keys in
    /// order: bytes, duration_ms, log, method, request_id, route, status, subject).
    func append(_ record: AccessRecord, second: (local: String, utc: String), millisecond: Int, to line: inout [UInt8])
    {
        switch format {
        case .text:
            line += second.local.utf8
            line += " info ".utf8
            line += label.utf8
            line += ": bytes=".utf8
            LogText.appendDecimal(record.bytes, to: &line)
            line += " duration_ms=".utf8
            Self.appendMilliseconds(record.elapsed, to: &line)
            line += " log=access method=".utf8
            LogText.appendPlain(Self.bounded(record.method), to: &line)
            line += " request_id=".utf8
            LogText.appendPlain(Self.bounded(record.requestID), to: &line)
            line += " route=".utf8
            LogText.appendPlain(Self.bounded(record.route), to: &line)
            line += " status=".utf8
            LogText.appendDecimal(record.status, to: &line)
            if let subject = record.subject {
                line += " subject=".utf8
                LogText.appendPlain(Self.bounded(subject), to: &line)
            }
            line += " [QuireAPI] request\n".utf8
        case .json:
            line += #"{"time":""#.utf8
            line += second.utc.utf8
            line.append(UInt8(ascii: "."))
            line.append(UInt8(ascii: "0") + UInt8(millisecond / 100))
            line.append(UInt8(ascii: "0") + UInt8(millisecond / 10 % 10))
            line.append(UInt8(ascii: "0") + UInt8(millisecond % 10))
            line += #"Z","level":"info","label":"#.utf8
            LogText.appendJSONString(label, to: &line)
            line += #","message":"request","bytes":""#.utf8
            LogText.appendDecimal(record.bytes, to: &line)
            line += #"","duration_ms":""#.utf8
            Self.appendMilliseconds(record.elapsed, to: &line)
            line += #"","log":"access","method":"#.utf8
            LogText.appendJSONString(Self.bounded(record.method), to: &line)
            line += #","request_id":"#.utf8
            LogText.appendJSONString(Self.bounded(record.requestID), to: &line)
            line += #","route":"#.utf8
            LogText.appendJSONString(Self.bounded(record.route), to: &line)
            line += #","status":""#.utf8
            LogText.appendDecimal(record.status, to: &line)
            line.append(UInt8(ascii: "\""))
            if let subject = record.subject {
                line += #","subject":"#.utf8
                LogText.appendJSONString(Self.bounded(subject), to: &line)
            }
            line += "}\n".utf8
        }
    }

    /// `value` cut to ``longestField`` bytes, so that no line outgrows
    /// ``longestLine``.
    private static func bounded(_ value: String) -> String {
        guard value.utf8.count > longestField else { return value }
        return String(decoding: value.utf8.prefix(longestField), as: UTF8.self)  // a cut character: U+FFFD
    }

    /// Milliseconds with three decimals (`0.042`), the duration's text in both formats.
    static func milliseconds(_ elapsed: Duration) -> String {
        var text: [UInt8] = []
        appendMilliseconds(elapsed, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    static func appendMilliseconds(_ elapsed: Duration, to line: inout [UInt8]) {
        let (seconds, attoseconds) = elapsed.components
        let microseconds = max(0, Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
        LogText.appendDecimal(microseconds / 1000, to: &line)
        let fraction = microseconds % 1000
        line.append(UInt8(ascii: "."))
        line.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        line.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        line.append(UInt8(ascii: "0") + UInt8(fraction % 10))
    }
}
