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
    public var elapsed: Duration {
        get { .nanoseconds(elapsedNanoseconds) }
        set { elapsedNanoseconds = newValue.nanoseconds }
    }
    /// `elapsed` as kept: reading a `Duration`'s components divides a 128-bit count of attoseconds on every line.
    var elapsedNanoseconds: Int64
    /// The body's bytes as sent.
    public var bytes: Int
    public var requestID: String
    /// The subject of the caller's token, if it had one.
    public var subject: String?
    /// The request's trace id (``TraceContext``): the line's `trace_id`, left out when ``TraceID/none``.
    public var traceID: TraceID

    public init(
        method: String, route: String, status: Int, elapsed: Duration, bytes: Int, requestID: String,
        subject: String? = nil, traceID: TraceID = .none
    ) {
        self.init(
            method: method, route: route, status: status, elapsedNanoseconds: elapsed.nanoseconds, bytes: bytes,
            requestID: requestID, subject: subject, traceID: traceID)
    }

    init(
        method: String, route: String, status: Int, elapsedNanoseconds: Int64, bytes: Int, requestID: String,
        subject: String?, traceID: TraceID
    ) {
        self.method = method
        self.route = route
        self.status = status
        self.elapsedNanoseconds = elapsedNanoseconds
        self.bytes = bytes
        self.requestID = requestID
        self.subject = subject
        self.traceID = traceID
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
                    "duration_ms": "\(BufferedAccessLog.milliseconds(record.elapsedNanoseconds))",
                    "bytes": "\(record.bytes)",
                    "request_id": "\(record.requestID)",
                ]
                if let subject = record.subject { metadata["subject"] = "\(subject)" }
                if !record.traceID.isNone { metadata["trace_id"] = "\(record.traceID.text)" }
                return metadata
            }())
    }

    public var droppedLines: Int { 0 }
}

/// The access log of `quire serve`, as nginx's `access_log … buffer= flush=`: a request formats its line on its
/// stack and copies it into a bounded buffer under a short lock (no allocation: the buffer's capacity is
/// reserved once) and returns; a thread of its own writes the buffer in one `write(2)` when it is half full and
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
        /// The second the last line was stamped in, and the start of its lines (``head(of:)``): reused, so a line
        /// takes no other lock.
        var stamp: (second: Int, head: [UInt8]) = (-1, [])
    }

    private let state: Mutex<State>
    private let format: LogFormat
    private let label: String
    /// The tail's start up to the first value, label included (`" info quire: bytes="`; in JSON, from the `Z`
    /// after the milliseconds to `"bytes":"`): the same bytes on every line, made once.
    private let tailStart: [UInt8]
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
        var start: [UInt8] = []
        switch format {
        case .text:
            start += " info ".utf8
            start += label.utf8
            start += ": bytes=".utf8
        case .json:
            start += #"Z","level":"info","label":"#.utf8
            LogText.appendJSONString(label, to: &start)
            start += #","message":"request","bytes":""#.utf8
        }
        tailStart = start
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
        // The line but its head (the second's stamp) is formatted before the lock is taken; under it, two copies.
        withTail(of: record, millisecond: millisecond) { tail in
            var fresh: (second: Int, head: [UInt8])?  // the head of a new second, made outside the lock
            while true {
                let outcome = state.withLock { state -> Outcome in
                    if let fresh { state.stamp = fresh }
                    if state.closed { return .closed }
                    guard state.stamp.second == now.tv_sec else { return .newSecond }
                    guard state.bytes.count < capacity else {
                        state.dropped += 1
                        return .written
                    }
                    state.bytes += state.stamp.head
                    state.bytes.append(contentsOf: tail)
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
                    fresh = (now.tv_sec, head(of: clock.second(now.tv_sec)))
                case .closed:  // after close: written at once, never lost
                    output.write(head(of: clock.second(now.tv_sec)) + tail)
                    return
                }
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
    /// order: bytes, duration_ms, log, method, request_id, route, status, subject, trace_id).
    func append(_ record: AccessRecord, second: (local: String, utc: String), millisecond: Int, to line: inout [UInt8])
    {
        line += head(of: second)
        withTail(of: record, millisecond: millisecond) { line.append(contentsOf: $0) }
    }

    /// What starts every line of a second: its local time (text), or the object's start and its UTC time to
    /// the second (JSON; the milliseconds begin the tail).
    private func head(of second: (local: String, utc: String)) -> [UInt8] {
        switch format {
        case .text: Array(second.local.utf8)
        case .json: Array(#"{"time":""#.utf8) + Array(second.utc.utf8) + [UInt8(ascii: ".")]
        }
    }

    /// `body` of the line's bytes after its head, written in place through a pointer into a buffer of the longest
    /// the tail could be: on the stack for every line but those of long, heavily escaped fields (the standard
    /// library's choice by size). Appended piece by piece to an array (each piece checking the array's room and its
    /// uniqueness, a literal reached through its string) a line would cost a large share of a small request.
    private func withTail<Result>(
        of record: AccessRecord, millisecond: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        let (method, id, route) = (
            Self.bounded(record.method), Self.bounded(record.requestID), Self.bounded(record.route)
        )
        let subject = record.subject.map(Self.bounded)
        // Bytes of the fixed text (text ~120, JSON ~170), of three numbers (20 digits at most each), of the trace
        // id (32), and of the values, each byte escaped at worst into six.
        let expansion = format == .json ? 6 : 1
        let values = method.utf8.count + id.utf8.count + route.utf8.count + (subject?.utf8.count ?? 0)
        let longest = 220 + 20 * 3 + 32 + expansion * (label.utf8.count + values)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: longest) { buffer in
            var line = LineWriter(buffer.baseAddress!)
            switch format {
            case .text:
                tailStart.withUnsafeBufferPointer { line.append($0) }
                line.appendDecimal(record.bytes)
                line.append(" duration_ms=")
                line.appendMilliseconds(record.elapsedNanoseconds)
                line.append(" log=access method=")
                line.appendPlain(method)
                line.append(" request_id=")
                line.appendPlain(id)
                line.append(" route=")
                line.appendPlain(route)
                line.append(" status=")
                line.appendDecimal(record.status)
                if let subject {
                    line.append(" subject=")
                    line.appendPlain(subject)
                }
                if !record.traceID.isNone {
                    line.append(" trace_id=")
                    line.appendHex(record.traceID)
                }
                line.append(" [QuireAPI] request\n")
            case .json:
                line.appendThreeDigits(millisecond)
                tailStart.withUnsafeBufferPointer { line.append($0) }
                line.appendDecimal(record.bytes)
                line.append(#"","duration_ms":""#)
                line.appendMilliseconds(record.elapsedNanoseconds)
                line.append(#"","log":"access","method":"#)
                line.appendJSONString(method)
                line.append(#","request_id":"#)
                line.appendJSONString(id)
                line.append(#","route":"#)
                line.appendJSONString(route)
                line.append(#","status":""#)
                line.appendDecimal(record.status)
                line.append(UInt8(ascii: "\""))
                if let subject {
                    line.append(#","subject":"#)
                    line.appendJSONString(subject)
                }
                if !record.traceID.isNone {
                    line.append(#","trace_id":""#)
                    line.appendHex(record.traceID)
                    line.append(UInt8(ascii: "\""))
                }
                line.append("}\n")
            }
            assert(line.written.count <= longest, "a line's tail outgrew its bound")
            return body(line.written)
        }
    }

    /// `value` cut to ``longestField`` bytes, so that no line outgrows
    /// ``longestLine``.
    private static func bounded(_ value: String) -> String {
        guard value.utf8.count > longestField else { return value }
        return String(decoding: value.utf8.prefix(longestField), as: UTF8.self)  // a cut character: U+FFFD
    }

    /// Milliseconds with three decimals (`0.042`), the duration's text in both formats.
    static func milliseconds(_ nanoseconds: Int64) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            var text = LineWriter(buffer.baseAddress!)
            text.appendMilliseconds(nanoseconds)
            return String(decoding: text.written, as: UTF8.self)
        }
    }
}

/// Writes a line's bytes at a pointer, into room its caller made for them (the caller bounds what it writes).
struct LineWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private var end: UnsafeMutablePointer<UInt8>

    init(_ start: UnsafeMutablePointer<UInt8>) {
        (self.start, end) = (start, start)
    }

    /// What was written.
    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: end - start) }

    mutating func append(_ byte: UInt8) {
        end.initialize(to: byte)
        end += 1
    }

    /// A literal's bytes, read where the literal lies.
    mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { append($0) }
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        end.initialize(from: base, count: bytes.count)
        end += bytes.count
    }

    /// `value` in decimal.
    mutating func appendDecimal(_ value: Int) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        var digits = 1
        var probe = rest / 10
        while probe > 0 {
            digits += 1
            probe /= 10
        }
        var cursor = end + digits
        repeat {
            cursor -= 1
            cursor.initialize(to: UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        end += digits
    }

    /// A trace id's 32 hex digits.
    mutating func appendHex(_ trace: TraceID) {
        TraceID.writeHex(trace.high, into: end)
        TraceID.writeHex(trace.low, into: end + 16)
        end += 32
    }

    /// `value` (0 to 999) as three digits.
    mutating func appendThreeDigits(_ value: Int) {
        append(UInt8(ascii: "0") + UInt8(value / 100))
        append(UInt8(ascii: "0") + UInt8(value / 10 % 10))
        append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// Milliseconds with three decimals (`0.042`), from nanoseconds; `0.000` for a negative duration.
    mutating func appendMilliseconds(_ nanoseconds: Int64) {
        let microseconds = max(0, Int(nanoseconds / 1000))
        appendDecimal(microseconds / 1000)
        append(UInt8(ascii: "."))
        appendThreeDigits(microseconds % 1000)
    }

    /// `text` for the text format: control characters become `?`, so that a value (a token's subject) can never
    /// start a forged line.
    mutating func appendPlain(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            // Looked over first, without branching on each byte, then copied whole: nearly every value.
            var controls: UInt8 = 0
            for byte in bytes { controls |= (byte < 0x20 ? 1 : 0) | (byte == 0x7F ? 1 : 0) }
            guard controls != 0 else { return append(bytes) }
            for byte in bytes { append(byte < 0x20 || byte == 0x7F ? UInt8(ascii: "?") : byte) }
        }
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped (six bytes at most a byte).
    mutating func appendJSONString(_ text: String) {
        var text = text
        append(UInt8(ascii: "\""))
        text.withUTF8 { bytes in
            var escaped: UInt8 = 0
            for byte in bytes {
                escaped |=
                    (byte < 0x20 ? 1 : 0) | (byte == UInt8(ascii: "\"") ? 1 : 0) | (byte == UInt8(ascii: "\\") ? 1 : 0)
            }
            guard escaped != 0 else { return append(bytes) }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): append(#"\""#)
                case UInt8(ascii: "\\"): append(#"\\"#)
                case UInt8(ascii: "\n"): append(#"\n"#)
                case UInt8(ascii: "\r"): append(#"\r"#)
                case UInt8(ascii: "\t"): append(#"\t"#)
                case 0..<0x20:
                    append(#"\u00"#)
                    append(Self.hexDigit(byte >> 4))
                    append(Self.hexDigit(byte & 0xF))
                default: append(byte)
                }
            }
        }
        append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
