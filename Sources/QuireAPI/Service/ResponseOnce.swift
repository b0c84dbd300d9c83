import Dispatch
import QuireHTTP
import Synchronization

/// The response of a suspended connection (a ``PendingResponse``), given once by the thread that made it and
/// waited for by a shutdown that comes first: a write still running when the service stops is answered with its
/// own outcome, neither lost nor answered as refused.
final class ResponseOnce: Sendable {
    private let response = Mutex<Response?>(nil)
    private let given = DispatchSemaphore(value: 0)

    func set(_ response: Response) {
        self.response.withLock { $0 = response }
        given.signal()
    }

    func wait() -> Response {
        given.wait()
        given.signal()  // for any later waiter
        return response.withLock { $0! }
    }
}
