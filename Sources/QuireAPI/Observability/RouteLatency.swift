import Prometheus
import Synchronization

/// A route's request durations, the `quire_http_request_duration_seconds` series of its route.
///
/// Hand-written where swift-prometheus's `Histogram` would do, because it is on every request's path: the
/// library's `record` takes a lock and walks every bucket (adding one to each bucket at or above the value),
/// a noticeable share of a small request's cost in Quire's code, with two worker threads contending for the lock
/// of a busy route. Here a request finds its one bucket and makes three
/// relaxed atomic additions; the cumulative counts of the exposition format are added up at scrape, when the
/// family is written in the text swift-prometheus writes for its own histograms (same `le` values, same
/// `_sum` rendering).
final class RouteLatency: Sendable {
    /// The buckets' upper bounds (inclusive, as Prometheus's `le`): the service's duration buckets.
    static let bounds: [Duration] = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60].map {
        .nanoseconds(Int64($0 * 1e9))
    }
    private static let boundNanoseconds: [Int64] = bounds.map(\.nanoseconds)
    private static let boundLabels: [String] = bounds.map(\.bucketRepresentation)

    /// Observations per bucket, not cumulative; the last is past every bound (`+Inf`).
    private let counts: InlineArray<13, Atomic<Int>>
    private let sumNanoseconds = Atomic<Int64>(0)

    init() {
        counts = InlineArray { _ in Atomic(0) }
    }

    func record(_ elapsed: Duration) {
        record(nanoseconds: elapsed.nanoseconds)
    }

    func record(nanoseconds: Int64) {
        var bucket = 0
        Self.boundNanoseconds.withUnsafeBufferPointer { bounds in
            while bucket < bounds.count && nanoseconds > bounds[bucket] { bucket += 1 }
        }
        counts[bucket].add(1, ordering: .relaxed)
        sumNanoseconds.add(nanoseconds, ordering: .relaxed)
    }

    /// Appends the route's `_bucket`, `_sum` and `_count` lines, labelled `route="<pattern>"`.
    func write(name: String, route: String, into out: inout [UInt8]) {
        var cumulative = 0
        for index in 0...Self.bounds.count {
            cumulative += counts[index].load(ordering: .relaxed)
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: #"_bucket{route=""#.utf8)
            Self.appendLabelValue(route, into: &out)
            out.append(contentsOf: #"",le=""#.utf8)
            out.append(contentsOf: (index < Self.bounds.count ? Self.boundLabels[index] : "+Inf").utf8)
            out.append(contentsOf: #""} "#.utf8)
            out.append(contentsOf: String(cumulative).utf8)
            out.append(UInt8(ascii: "\n"))
        }
        let sum = Duration.nanoseconds(sumNanoseconds.load(ordering: .relaxed))
        for (suffix, value) in [("_sum", sum.bucketRepresentation), ("_count", String(cumulative))] {
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: suffix.utf8)
            out.append(contentsOf: #"{route=""#.utf8)
            Self.appendLabelValue(route, into: &out)
            out.append(contentsOf: #""} "#.utf8)
            out.append(contentsOf: value.utf8)
            out.append(UInt8(ascii: "\n"))
        }
    }

    /// A label value with `\`, `"` and line feeds escaped (the text format's rules).
    private static func appendLabelValue(_ value: String, into out: inout [UInt8]) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
            default: out.append(byte)
            }
        }
    }
}
