import Dispatch
import QuireCore
import QuireHTTP
import Synchronization

/// The lanes: serial queues where the writes of a database run, a list's writes always on the same one (they take
/// the list's lock one after another anyway), different lists spread over ``laneCount`` of them.
///
/// Not one concurrent queue: on Linux, libdispatch runs a concurrent queue's work on its pool of about one thread
/// per core, which it grows by about a thread a second while they block, and a commit waiting on the database blocks its thread (an
/// unreachable database, or another instance holding the list's lock). Past two or three such commits, every other
/// write (and the pool's other work, as the long polls' fan-out) would queue behind them (`StoreWriteTests` holds
/// six). A serial queue is given a thread of its own whenever it has work, whatever the pool's threads are doing,
/// so a stuck commit holds only the writes of its own lane.
extension WriteScheduler {
    /// How many lists' writes can run at once, at most (fewer when two lists share a lane).
    static let laneCount = 16

    /// The lane of `list`'s writes: the same for the same name in every run (FNV-1a of its bytes).
    static func lane(of list: String) -> Int {
        var hash: UInt32 = 2_166_136_261
        for byte in list.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return Int(hash % UInt32(laneCount))
    }

    /// The reply of `write` of `list`, made on the list's lane; the connection waits suspended until it is ready.
    func deferred(list: String, _ write: @escaping @Sendable () -> Response) -> Reply {
        if let refusal = writeRefusal { return refusal }
        let outcome = ResponseOnce()
        let pending = PendingResponse(onShutdown: { outcome.wait() })
        offThread.add(1, ordering: .relaxed)
        lanes[Self.lane(of: list)].async(group: running) {
            let response = write()
            self.offThread.subtract(1, ordering: .relaxed)
            outcome.set(response)
            pending.resume(with: response)
        }
        return .deferred(pending)
    }

    /// Makes `write` of `list` on the list's lane, for a producer that is not a connection: `write` gives its
    /// outcome itself. `false` when the service is shutting down (nothing is made).
    func onLane(list: String, _ write: @escaping @Sendable () -> Void) -> Bool {
        if isRefusing { return false }
        offThread.add(1, ordering: .relaxed)
        lanes[Self.lane(of: list)].async(group: running) {
            write()
            self.offThread.subtract(1, ordering: .relaxed)
        }
        return true
    }
}
