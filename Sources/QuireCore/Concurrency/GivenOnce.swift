import Dispatch
import Synchronization

/// A value given once by the thread that makes it and waited for by any number of others: a write's response
/// waited for by a shutdown that comes first, a source's batch commit waited for by the stream that handed it off.
public final class GivenOnce<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let given = DispatchSemaphore(value: 0)

    public init() {}

    /// Gives the value; waiters return it. Called once.
    public func set(_ value: Value) {
        self.value.withLock { $0 = value }
        given.signal()
    }

    /// Waits until the value is given, and returns it.
    public func wait() -> Value {
        given.wait()
        given.signal()  // for any later waiter
        return value.withLock { $0! }
    }
}
