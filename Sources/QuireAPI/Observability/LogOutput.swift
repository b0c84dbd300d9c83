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
    /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped (as the access log's
    /// ``LineWriter`` writes it).
    public static func appendJSONString(_ text: String, to line: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 6 * text.utf8.count + 2) { buffer in
            var writer = LineWriter(buffer.baseAddress!)
            writer.appendJSONString(text)
            line.append(contentsOf: writer.written)
        }
    }
}
