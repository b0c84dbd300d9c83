import Foundation
public import Logging
import NIOCore
import PostgresNIO
public import QuireCore
import Synchronization

/// Brings every commit other instances make into this instance's registry: `LISTEN quire_changes` on a
/// connection of its own to learn of commits at once, and a read of the log after the last position
/// applied, at every notification, at least once a second (a notification can be lost with its
/// connection), and after every reconnection. The registry replays each logged write of a list it holds on the
/// version it holds (``ListRegistry/apply(_:)``), and passes over the others (a list is read from the store when
/// it is loaded); an instance behind the log's retention reads every list it holds again.
///
/// One thread of its own, blocked on a semaphore while nothing happens. While it has no connection to the
/// store, and until a read after (re)connecting has drained the log, the registry's replication status says
/// it is catching up (`/readyz` answers `503`); lists and sessions keep being served from memory.
public final class PostgresChangeFeed: Sendable {
    private let store: PostgresListStore
    private let registry: ListRegistry
    private let logger: Logger
    private let wake = DispatchSemaphore(value: 0)
    private let state: Mutex<State>
    /// Changes read per query of the log.
    static let batch = 1_000

    private struct State {
        /// The log position everything up to which is applied.
        var position: Int64
        var stopped = false
        var listener: PostgresConnection?
        var lastTrim = ContinuousClock.now
    }

    /// - Parameter position: the log's position before the registry loaded any list
    ///   (``PostgresListStore/currentLogPosition()``).
    public init(store: PostgresListStore, registry: ListRegistry, position: Int64, logger: Logger) {
        self.store = store
        self.registry = registry
        self.logger = logger
        state = Mutex(State(position: position))
    }

    /// The log position applied so far.
    public var position: Int64 { state.withLock { $0.position } }

    /// Starts following the log.
    public func start() {
        registry.replication.isCatchingUp = true
        let thread = Thread { [self] in run() }
        thread.name = "quire-change-feed"
        thread.start()
    }

    /// Stops following the log (returns at once; the thread ends within its current query).
    public func stop() {
        let listener = state.withLock { state in
            state.stopped = true
            defer { state.listener = nil }
            return state.listener
        }
        wake.signal()
        if let listener { _ = try? listener.close().wait(within: store.patience) }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func run() {
        var connected = false
        var delay = 0.1
        while !isStopped {
            if !connected {
                do {
                    try listen()
                    connected = true
                    delay = 0.1
                    registry.replication.isCatchingUp = true
                    registry.replication.caughtUp()
                    logger.info("change feed: listening", metadata: ["store": "\(store.settings.redacted)"])
                } catch {
                    registry.replication.isCatchingUp = true
                    if !isStopped {
                        logger.warning("change feed: no connection to the store, retrying in \(delay) s: \(error)")
                    }
                    _ = wake.wait(timeout: .now() + delay)
                    delay = min(delay * 2, 2)
                    continue
                }
            }
            do {
                try drain()
                registry.replication.isCatchingUp = false
                trimIfDue()
            } catch {
                logger.warning("change feed: reading the log failed: \(error)")
                registry.replication.isCatchingUp = true
                dropListener()
                connected = false
                continue
            }
            _ = wake.wait(timeout: .now() + 1)
            if state.withLock({ $0.listener?.isClosed ?? true }) {
                // The connection is gone, and notifications with it: catching up again once reconnected.
                registry.replication.isCatchingUp = true
                dropListener()
                connected = false
            }
        }
    }

    /// Connects the listening connection and subscribes.
    private func listen() throws {
        let connection = try store.connections.connect()
        connection.addListener(channel: PostgresListStore.channel) { [weak self] _, _ in
            guard let self else { return }
            registry.replication.notified()
            wake.signal()
        }
        do {
            _ = try connection.query("LISTEN \(unescaped: PostgresListStore.channel)", logger: logger).wait(
                within: store.patience)
        } catch {
            _ = try? connection.close().wait(within: store.patience)
            throw PostgresStoreError("LISTEN failed: \(PostgresConnections.describe(error))")
        }
        let stale = state.withLock { state -> PostgresConnection? in
            defer { state.listener = connection }
            return state.listener
        }
        if let stale { _ = try? stale.close().wait(within: store.patience) }
    }

    private func dropListener() {
        let listener = state.withLock { state in
            defer { state.listener = nil }
            return state.listener
        }
        if let listener { _ = try? listener.close().wait(within: store.patience) }
    }

    /// Reads and applies the log until nothing is left after the position.
    private func drain() throws {
        while !isStopped {
            let position = self.position
            let (changes, oldest) = try store.changes(after: position, limit: Self.batch)
            if let first = changes.first?.position ?? oldest, first > position + 1 {
                // The log no longer has what this instance lacks: every list it holds is read again.
                logger.warning(
                    "change feed: behind the log's retention, reloading the lists held",
                    metadata: ["position": "\(position)", "oldest": "\(first)", "lists": "\(registry.resident.lists)"])
                let now = try store.currentLogPosition()
                try registry.reloadResident()
                state.withLock { $0.position = max($0.position, now) }
                continue
            }
            guard !changes.isEmpty else {
                registry.replication.setLag(versions: 0, seconds: 0)
                return
            }
            registry.replication.setLag(
                versions: changes.count, seconds: Date().timeIntervalSince1970 - changes[0].committedAt)
            try registry.apply(changes)
            state.withLock { $0.position = changes[changes.count - 1].position }
            if changes.count < Self.batch {
                registry.replication.setLag(versions: 0, seconds: 0)
                return
            }
        }
    }

    /// About once a minute: drops the log's changes past the retention.
    private func trimIfDue() {
        let due = state.withLock { state in
            guard ContinuousClock.now - state.lastTrim > .seconds(60) else { return false }
            state.lastTrim = .now
            return true
        }
        guard due else { return }
        do {
            let dropped = try store.trimLog()
            if dropped > 0 { logger.debug("change feed: \(dropped) changes past the retention dropped from the log") }
        } catch {
            logger.warning("change feed: trimming the log failed: \(error)")
        }
    }
}
