#if canImport(Glibc)
    public import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

/// The monotonic clock (`CLOCK_MONOTONIC`), read in nanoseconds from an arbitrary origin (the system's boot, on
/// Linux): only differences between two readings count.
///
/// Sessions, views and the router's timing read it on every request, so it reads `clock_gettime` directly and
/// adds in 64 bits: `ContinuousClock.now` minus an origin goes through the runtime and through `Duration`'s
/// 128-bit attoseconds, which costs several times more for the same answer. Inlinable, so that a reading in
/// another module is the system call and an addition, with no call in between.
public enum MonotonicClock {
    /// Nanoseconds since the clock's origin.
    ///
    /// - Complexity: O(1), one `clock_gettime`.
    @inlinable
    public static var nanoseconds: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}
