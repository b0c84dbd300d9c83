import QuireHTTP
import Synchronization

/// A W3C Trace Context trace id: 128 bits, written as 32 lowercase hex digits. Kept as two words, so that a
/// request carries it without an allocation; its text is made only where it is written (a log line, a problem).
public struct TraceID: Sendable, Equatable {
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        (self.high, self.low) = (high, low)
    }

    /// No trace (all zeros, which the W3C format forbids as an id): what a record made outside a request holds.
    public static let none = TraceID(high: 0, low: 0)

    public var isNone: Bool { high == 0 && low == 0 }

    /// A fresh id, unique within and across processes in practice: 64 random bits chosen at start, then a counter
    /// mixed by SplitMix64 (a bijection, so no two counts give one id) under a random key, so the ids look random.
    /// No system call per request: as request ids, trace ids are for finding a request in logs, not secrets.
    static func fresh() -> TraceID {
        TraceID(high: prefix, low: mixed(counter.add(1, ordering: .relaxed).newValue &+ key))
    }

    /// Never zero: a fresh id is never all zeros.
    private static let prefix = UInt64.random(in: 1 ... .max)
    private static let key = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)

    /// SplitMix64's finalizer.
    private static func mixed(_ value: UInt64) -> UInt64 {
        var mixed = value &+ 0x9E37_79B9_7F4A_7C15
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// The 32 hex digits.
    public var text: String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            TraceID.writeHex(high, into: buffer.baseAddress!)
            TraceID.writeHex(low, into: buffer.baseAddress! + 16)
            return 32
        }
    }

    /// `value` as 16 lowercase hex digits at `start`.
    static func writeHex(_ value: UInt64, into start: UnsafeMutablePointer<UInt8>) {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { digits in
            for index in 0..<16 {
                start[index] = digits[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
            }
        }
    }
}

/// The trace context of a request: the trace id of its `traceparent` field (W3C Trace Context, level 1), or a
/// fresh one when it sent none or one that is not valid, so that every request's log line and `5xx` problem name a
/// trace that a proxy in front (deploy/nginx) logged too.
///
/// Reading it costs a lookup of one field and, when present, a pass over its 55 bytes; nothing is allocated, and a
/// fresh id takes an atomic increment, no system call.
enum TraceContext {
    /// The trace id `request` carries, or a fresh one.
    static func traceID(of request: Request) -> TraceID {
        if case .some(.some(let given)) = request.headers.withValue(of: "traceparent", { parse($0) }) { return given }
        return .fresh()
    }

    /// The trace id of a `traceparent` value: `version "-" trace-id "-" parent-id "-" flags`, lowercase hex of 2,
    /// 32, 16 and 2 digits; version `ff` is invalid, `00` is exactly 55 bytes long, a later version may add
    /// fields after a `-`. An all-zero trace id or parent id is invalid. `nil` when the value is not valid.
    static func parse(_ value: UnsafeBufferPointer<UInt8>) -> TraceID? {
        guard value.count >= 55, value[2] == dash, value[35] == dash, value[52] == dash else { return nil }
        guard let version = hex(value, 0, 2), version != 0xFF else { return nil }
        if version == 0 ? value.count != 55 : value.count > 55 && value[55] != dash { return nil }
        guard let high = hex(value, 3, 16), let low = hex(value, 19, 16), let parent = hex(value, 36, 16),
            hex(value, 53, 2) != nil, high | low != 0, parent != 0
        else { return nil }
        return TraceID(high: high, low: low)
    }

    private static let dash = UInt8(ascii: "-")

    /// The `count` lowercase hex digits from `start` (16 at most), or `nil` when one is not.
    private static func hex(_ value: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> UInt64? {
        var result: UInt64 = 0
        for index in start..<start + count {
            let byte = value[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            result = result << 4 | UInt64(digit)
        }
        return result
    }
}
