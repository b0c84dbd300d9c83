import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Tells the other instances which lists this one committed (`NOTIFY quire_changes`), after each commit and
/// outside its transaction.
///
/// `NOTIFY` takes a lock on the whole database's notification queue at commit and holds it until its
/// transaction has ended, flush included: inside a writing transaction it would serialize every write of the
/// cluster behind one flush. Here notifications go on a connection of their own, with `synchronous_commit`
/// off (a notification is not durable anyway): the lock is held for microseconds, and the writes' transactions
/// hold nothing but their own list's locks.
///
/// One thread sends what is pending, every list at its latest position, several to a notification (up to
/// ``payloadLimit`` bytes), so a burst of commits costs a few notifications. A notification lost (this instance
/// killed between a commit and its notification, or the database unreachable) is made up for by the other
/// instances' sweep (``PostgresChangeFeed``), within ``PostgresChangeFeed/sweepInterval``.
///
/// The payload: the sending store's ``origin`` on the first line (a feed passes over its own instance's commits),
/// then one line per list: its position in the log, a space, the list's name (names have no line breaks), and the
/// commit's time in seconds since 1970 after a second space.
final class PostgresNotifier: Sendable {
    private let connections: PostgresConnections
    private let logger: Logger
    let origin: String
    private let wake = DispatchSemaphore(value: 0)
    private let state = Mutex(State())
    /// PostgreSQL's limit for a payload is 8,000 bytes.
    static let payloadLimit = 7_900

    private struct State {
        /// The lists committed and not yet announced, each with its latest position and commit time.
        var pending: [String: (position: Int64, time: Double)] = [:]
        var started = false
        var stopped = false
        var connection: PostgresConnection?
    }

    init(connections: PostgresConnections, logger: Logger) {
        self.connections = connections
        self.logger = logger
        origin = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }

    /// Announces `list`'s commit at `position` (returns at once; the thread starts with the first).
    func announce(_ list: String, position: Int64) {
        let time = Date().timeIntervalSince1970
        let start = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            if let known = state.pending[list], known.position >= position { return false }
            state.pending[list] = (position, time)
            defer { state.started = true }
            return !state.started
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "quire-notifier"
            thread.start()
        }
        wake.signal()
    }

    /// Stops the thread and closes its connection (what is pending is not announced: the others' sweep finds it).
    func stop() {
        let connection = state.withLock { state in
            state.stopped = true
            defer { state.connection = nil }
            return state.connection
        }
        wake.signal()
        if let connection { _ = try? connection.close().wait(within: connections.patience) }
    }

    private func run() {
        var delay = 0.05
        while true {
            wake.wait()
            let (pending, stopped) = state.withLock { state in
                defer { state.pending.removeAll(keepingCapacity: true) }
                return (state.pending, state.stopped)
            }
            if stopped { return }
            if pending.isEmpty { continue }
            do {
                try send(pending)
                delay = 0.05
            } catch {
                logger.warning("notifier: announcing \(pending.count) lists failed, retrying in \(delay) s: \(error)")
                dropConnection()
                // Put back what was not announced, unless newer commits of those lists are pending already.
                state.withLock { state in
                    state.pending.merge(pending) { newer, _ in newer }
                }
                Thread.sleep(forTimeInterval: delay)
                delay = min(delay * 2, 2)
                wake.signal()
            }
        }
    }

    private func send(_ pending: [String: (position: Int64, time: Double)]) throws {
        let connection = try openConnection()
        var payload = origin
        for (list, (position, time)) in pending {
            let line = "\n\(position) \(list) \(time)"
            if payload.utf8.count + line.utf8.count > Self.payloadLimit {
                try notify(payload, on: connection)
                payload = origin
            }
            payload += line
        }
        try notify(payload, on: connection)
    }

    private func notify(_ payload: String, on connection: PostgresConnection) throws {
        _ = try connection.query(
            "SELECT pg_notify(\(PostgresListStore.channel), \(payload))", logger: logger
        ).wait(within: connections.patience)
    }

    private func openConnection() throws -> PostgresConnection {
        if let connection = state.withLock({ $0.connection }), !connection.isClosed { return connection }
        let connection = try connections.connect()
        do {
            _ = try connection.query("SET synchronous_commit = off", logger: logger).wait(
                within: connections.patience)
        } catch {
            _ = try? connection.close().wait(within: connections.patience)
            throw error
        }
        let (stale, stopped) = state.withLock { state -> (PostgresConnection?, Bool) in
            guard !state.stopped else { return (nil, true) }
            defer { state.connection = connection }
            return (state.connection, false)
        }
        if let stale { _ = try? stale.close().wait(within: connections.patience) }
        if stopped {
            _ = try? connection.close().wait(within: connections.patience)
            throw PostgresStoreError("the notifier is stopped")
        }
        return connection
    }

    private func dropConnection() {
        let connection = state.withLock { state in
            defer { state.connection = nil }
            return state.connection
        }
        if let connection { _ = try? connection.close().wait(within: connections.patience) }
    }
}
