import Glibc
import QuireHTTP
import Synchronization

/// Runs `body(0)`, …, `body(count - 1)` on `count` threads of their own (not Swift concurrency's
/// small pool, so blocking clients really run at once), waits for all, and rethrows the first error.
public func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let errors = Mutex<[any Error]>([])
    let threads = (0..<count).map { index in
        DetachedThread.startJoinable {
            do {
                try body(index)
            } catch {
                errors.withLock { $0.append(error) }
            }
        }
    }
    threads.forEach { $0.join() }
    if let first = errors.withLock({ $0.first }) {
        throw first
    }
}

/// Sleeps the calling thread.
public func sleep(milliseconds: Int) {
    usleep(UInt32(milliseconds * 1000))
}
