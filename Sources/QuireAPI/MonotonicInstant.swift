import Glibc

/// A reading of the monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds: what the router times every request
/// with.
///
/// Hand-written where `ContinuousClock` would do (it reads `CLOCK_BOOTTIME`, which differs only across a suspend of
/// the machine), because it is read twice on every request's path:
/// `ContinuousClock.now` cost ~160 instructions a read (the runtime's `swift_get_time`, then a `Duration` made of
/// an `Int128`), one `clock_gettime` costs about half of that (callgrind, `/healthz`).
public struct MonotonicInstant: Sendable, Hashable, Comparable {
    /// Nanoseconds since an unspecified start (the system's boot, on Linux).
    public let nanoseconds: UInt64

    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    public static var now: MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec))
    }

    /// The nanoseconds from `start` to this instant; 0 when `start` is later.
    public func nanoseconds(since start: MonotonicInstant) -> Int64 {
        nanoseconds > start.nanoseconds ? Int64(nanoseconds - start.nanoseconds) : 0
    }

    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }
}
