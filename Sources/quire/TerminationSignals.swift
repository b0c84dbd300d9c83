import Dispatch
import Glibc
import Synchronization

/// SIGINT and SIGTERM (stop), and SIGHUP (reload the TLS certificate and the JWKS file), received by one
/// dedicated thread through `sigwait`.
enum TerminationSignals {
    private static var set: sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGHUP)
        return signals
    }

    /// Blocks the signals in the calling thread; threads it starts afterwards inherit the mask.
    static func blockInThisThread() {
        var signals = set
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// Blocks the calling thread until SIGINT, SIGTERM or SIGHUP arrives, and returns its number.
    ///
    /// - Precondition: the signals are blocked in every thread (``blockInThisThread()`` at start-up).
    static func wait() -> Int32 {
        var signals = set
        var received: Int32 = 0
        sigwait(&signals, &received)
        return received
    }
}

/// Runs async work to completion from synchronous code on a thread outside Swift concurrency's pool
/// (the main thread of the command), and returns its result.
func runBlocking<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) throws -> Value {
    let result = Mutex<Result<Value, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<Value, any Error>
        do {
            outcome = .success(try await work())
        } catch {
            outcome = .failure(error)
        }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}
