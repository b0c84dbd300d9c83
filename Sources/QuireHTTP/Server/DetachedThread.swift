import Glibc

/// A thread of its own, outside Swift concurrency's small cooperative pool: for work that blocks or
/// sleeps (timers, the tests' blocking clients), so that it never starves async code.
public enum DetachedThread {
    /// Starts `body` on a new detached thread.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, runBox, Unmanaged.passRetained(Box(body)).toOpaque())
        precondition(created == 0, "cannot create a thread")
        pthread_detach(thread)
    }

    /// Starts `body` on a new thread that can be waited for.
    public static func startJoinable(_ body: @escaping @Sendable () -> Void) -> Joinable {
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, runBox, Unmanaged.passRetained(Box(body)).toOpaque())
        precondition(created == 0, "cannot create a thread")
        return Joinable(thread: thread)
    }

    /// A thread from ``startJoinable(_:)``.
    public struct Joinable: Sendable {
        fileprivate let thread: pthread_t

        /// Waits for the thread to end (once).
        public func join() {
            pthread_join(thread, nil)
        }
    }

    private final class Box: Sendable {
        let body: @Sendable () -> Void

        init(_ body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }

    private static let runBox: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { argument in
        Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue().body()
        return nil
    }
}
