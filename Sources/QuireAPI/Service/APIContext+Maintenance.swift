import Glibc
import Logging
import QuireCore
import QuireHTTP
import Synchronization

extension APIContext {
    /// Starts the once-a-second housekeeping thread: expired sessions are dropped (and the lists only they held
    /// may leave memory, if it is over its budget), lists idle for `lists.idleSeconds` leave memory, and with `demo.live` the demo list changes every
    /// `demo.intervalSeconds`. Stopped by ``shutdown()``.
    func startMaintenance() {
        guard maintenanceRunning.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
            return
        }
        let demo = configuration.demo
        let changeEvery = max(1, Int((demo.intervalSeconds * 10).rounded()))  // in 100 ms ticks
        DetachedThread.start { [self] in
            var ticks = 0
            var changes = 0
            while maintenanceRunning.load(ordering: .relaxed) {
                usleep(100_000)
                ticks += 1
                if ticks % 10 == 0 {
                    sessions.sweep()
                    views.sweep(isPinned: registry.pins.isPinned)
                    registry.enforceBudget()
                    registry.releaseIdle()
                }
                guard demo.live, ticks % changeEvery == 0 else { continue }
                changes += 1
                do {
                    try DemoData.liveChange(registry, tick: changes)
                } catch {
                    logger.warning("demo change failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
