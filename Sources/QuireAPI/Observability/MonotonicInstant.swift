import QuireCore

/// A reading of the monotonic clock, in nanoseconds (``SessionStore/monotonicNanoseconds()``): what the router
/// times every request with, read twice a request. `ContinuousClock.now` costs about twice one `clock_gettime` (the
/// runtime's `swift_get_time`, then a `Duration` made of an `Int128`).
public struct MonotonicInstant: Sendable {
    /// Nanoseconds since an unspecified start (the system's boot, on Linux).
    public let nanoseconds: UInt64

    public static var now: MonotonicInstant {
        MonotonicInstant(nanoseconds: SessionStore.monotonicNanoseconds())
    }

    /// The nanoseconds from `start` to this instant; 0 when `start` is later.
    public func nanoseconds(since start: MonotonicInstant) -> Int64 {
        nanoseconds > start.nanoseconds ? Int64(nanoseconds - start.nanoseconds) : 0
    }
}
