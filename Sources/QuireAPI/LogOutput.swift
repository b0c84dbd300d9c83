import Glibc
import Synchronization

/// How log lines are written: `text` as swift-log's `StreamLogHandler` writes them, or one JSON object
/// per line.
public enum LogFormat: String, Sendable, Equatable, CaseIterable {
    case text
    case json
}

/// Where log lines go: a file descriptor (standard error for `quire serve`), written with whole-line
/// `write(2)` calls under one lock, so that a batch of access-log lines and a line logged directly never
/// interleave, whatever the size of the batch.
public final class LogOutput: Sendable {
    /// Standard error, shared by every logger of the process.
    public static let standardError = LogOutput(descriptor: 2)

    private let descriptor: Int32
    /// Held while writing: `write(2)` to a pipe is atomic only up to `PIPE_BUF` bytes.
    private let writing = Mutex(())

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Writes `bytes` whole, retrying short writes and interruptions. A descriptor that is gone loses the
    /// bytes: there is nothing better to do with a log line.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        writing.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    public func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }
}

/// The log lines' timestamps: the local one of the text format (to the second, with the UTC offset) and
/// the UTC one of the JSON format (to the millisecond). The text of the current second is computed once
/// and shared by every thread.
public final class LogClock: Sendable {
    public struct Stamp: Sendable {
        /// `2026-11-21T17:00:59+0000`
        public let local: String
        /// `2026-11-21T17:00:59.517Z`
        public let utc: String

        public init(local: String, utc: String) {
            self.local = local
            self.utc = utc
        }
    }

    private let cached = Mutex<(second: Int, local: String, utc: String)?>(nil)

    public init() {}

    public func now() -> Stamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return stamp(seconds: time.tv_sec, milliseconds: time.tv_nsec / 1_000_000)
    }

    public func stamp(seconds: Int, milliseconds: Int) -> Stamp {
        let (local, utc) = second(seconds)
        let millis = String(milliseconds)
        return Stamp(local: local, utc: utc + "." + String(repeating: "0", count: 3 - millis.count) + millis + "Z")
    }

    /// The texts of `seconds` since the epoch: local with its offset, and UTC without milliseconds.
    func second(_ seconds: Int) -> (local: String, utc: String) {
        cached.withLock { cached -> (String, String)? in
            guard let cached, cached.second == seconds else { return nil }
            return (cached.local, cached.utc)
        } ?? format(seconds)
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

/// Writing values into log lines.
public enum LogText {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped.
    public static func appendJSONString(_ text: String, to line: inout [UInt8]) {
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

    /// Appends `text` for the text format: control characters become `?`, so that a value (a token's
    /// subject) can never start a forged line.
    public static func appendPlain(_ text: String, to line: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            // Copied whole when nothing needs replacing (every access-log line, nearly always): a byte-by-byte
            // append was the largest part of formatting a line.
            if !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                line.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                line.append(byte < 0x20 || byte == 0x7F ? UInt8(ascii: "?") : byte)
            }
        }
    }

    /// Appends `value` in decimal, without making a `String`.
    public static func appendDecimal(_ value: Int, to line: inout [UInt8]) {
        if value < 0 {
            line.append(UInt8(ascii: "-"))
            appendDecimal(-value, to: &line)
            return
        }
        if value >= 10 { appendDecimal(value / 10, to: &line) }
        line.append(UInt8(ascii: "0") + UInt8(value % 10))
    }
}
