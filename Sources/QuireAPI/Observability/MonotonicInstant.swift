import QuireCore

/// A reading of the monotonic clock, in nanoseconds (``MonotonicClock``): what the router times every request
/// with, read twice a request, where `ContinuousClock.now` would go through the runtime and a `Duration` made of
/// an `Int128` for the same answer.
public struct MonotonicInstant: Sendable {
    /// Nanoseconds since an unspecified start (the system's boot, on Linux).
    public let nanoseconds: UInt64

    public static var now: MonotonicInstant {
        MonotonicInstant(nanoseconds: MonotonicClock.nanoseconds)
    }

    /// The nanoseconds from `start` to this instant; 0 when `start` is later.
    public func nanoseconds(since start: MonotonicInstant) -> Int64 {
        nanoseconds > start.nanoseconds ? Int64(nanoseconds - start.nanoseconds) : 0
    }
}
