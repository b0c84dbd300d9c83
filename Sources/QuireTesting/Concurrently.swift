import Glibc
import Synchronization

/// Runs `body(0)`, …, `body(count - 1)` on `count` threads of their own (not Swift concurrency's
/// small pool, so blocking clients really run at once), waits for all, and rethrows the first error.
public func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let errors = Mutex<[any Error]>([])
    var threads: [pthread_t] = []
    for index in 0..<count {
        let work = ThreadWork {
            do {
                try body(index)
            } catch {
                errors.withLock { $0.append(error) }
            }
        }
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<ThreadWork>.fromOpaque(argument!).takeRetainedValue().run()
                return nil
            }, Unmanaged.passRetained(work).toOpaque())
        precondition(created == 0, "cannot create a thread")
        threads.append(thread)
    }
    for thread in threads {
        pthread_join(thread, nil)
    }
    if let first = errors.withLock({ $0.first }) {
        throw first
    }
}

/// Sleeps the calling thread.
public func sleep(milliseconds: Int) {
    usleep(UInt32(milliseconds * 1000))
}

private final class ThreadWork: Sendable {
    let run: @Sendable () -> Void

    init(_ run: @escaping @Sendable () -> Void) {
        self.run = run
    }
}
