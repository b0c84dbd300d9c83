import Foundation
public import Logging
import NIOCore
import PostgresNIO
public import QuireCore
import Synchronization

/// Brings the commits other instances make to the lists this instance holds into its registry, list by list:
/// nothing orders the commits of different lists, and nothing here reads a list this instance does not hold.
///
/// - **Notifications**: `LISTEN quire_changes` on a connection of its own. Each notification names lists and
///   the log position each was committed at (``PostgresNotifier``); for each list held below that position, the
///   registry reads the list's changes after the position it holds and replays them
///   (``ListRegistry/follow(_:to:)``). The notifications of this instance's own commits are passed over.
/// - **The sweep**: a notification is lost with its connection, or with an instance killed between its commit
///   and its notification. After every (re)connection, and every ``sweepInterval``, every list held is compared
///   with the store's position of it (one query per thousand lists), and each that differs is brought up to date
///   the same way (a list the store no longer has leaves memory).
///
/// One thread of its own, blocked on a semaphore while nothing happens. While it has no connection to the
/// store, and until the sweep after (re)connecting is done, the registry's replication status says it is
/// catching up (`/readyz` answers `503`); lists and sessions keep being served from memory.
public final class PostgresChangeFeed: Sendable {
    private let store: PostgresListStore
    private let registry: ListRegistry
    private let logger: Logger
    private let wake = DispatchSemaphore(value: 0)
    private let state = Mutex(State())
    /// How often every list held is compared with the store, whatever the notifications said.
    public static let sweepInterval: Duration = .seconds(2)
    /// Lists compared per query of the sweep.
    static let sweepBatch = 1_000

    private struct State {
        /// Lists other instances committed, not yet followed: each at its latest position, with the commit's time.
        var notified: [String: (position: Int64, time: Double)] = [:]
        var stopped = false
        var listener: PostgresConnection?
        /// When the last sweep ended; `nil`: a sweep is due (a new connection).
        var lastSweep: ContinuousClock.Instant?
        var lastTrim = ContinuousClock.now
    }

    public init(store: PostgresListStore, registry: ListRegistry, logger: Logger) {
        self.store = store
        self.registry = registry
        self.logger = logger
    }

    /// Starts following the store.
    public func start() {
        registry.replication.isCatchingUp = true
        let thread = Thread { [self] in run() }
        thread.name = "quire-change-feed"
        thread.start()
    }

    /// Stops following the store (returns at once; the thread ends within its current query).
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
                try followNotified()
                let sweepDue = state.withLock { state in
                    state.lastSweep.map { ContinuousClock.now - $0 >= Self.sweepInterval } ?? true
                }
                if sweepDue {
                    try sweep()
                    registry.replication.isCatchingUp = false
                }
                trimIfDue()
            } catch {
                logger.warning("change feed: reading the store failed: \(error)")
                registry.replication.isCatchingUp = true
                dropListener()
                connected = false
                continue
            }
            // Until the next sweep, and at least once a second to see whether the connection is still there.
            let untilSweep = state.withLock { ($0.lastSweep ?? .now) + Self.sweepInterval - .now }
            _ = wake.wait(timeout: .now() + min(1, max(0.001, untilSweep / .seconds(1))))
            if state.withLock({ $0.listener?.isClosed ?? true }) {
                // The connection is gone, and notifications with it: a sweep once reconnected.
                registry.replication.isCatchingUp = true
                dropListener()
                connected = false
            }
        }
    }

    /// Connects the listening connection and subscribes; a sweep is due from now on.
    private func listen() throws {
        let connection = try store.connections.connect()
        let origin = store.origin
        connection.addListener(channel: PostgresListStore.channel) { [weak self] _, notification in
            guard let self else { return }
            registry.replication.notified()
            guard let changes = Self.changes(in: notification.payload, passingOver: origin) else { return }
            state.withLock { state in
                for (list, position, time) in changes where (state.notified[list]?.position ?? .min) < position {
                    state.notified[list] = (position, time)
                }
            }
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
            defer {
                state.listener = connection
                state.lastSweep = nil
            }
            return state.listener
        }
        if let stale { _ = try? stale.close().wait(within: store.patience) }
    }

    /// The lists a notification names (``PostgresNotifier``), `nil` when it is this instance's own or unreadable.
    static func changes(in payload: String, passingOver origin: String) -> [(String, Int64, Double)]? {
        var lines = payload.split(separator: "\n", omittingEmptySubsequences: true)[...]
        guard let sender = lines.popFirst(), sender != origin else { return nil }
        return lines.compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let position = Int64(fields[0]), let time = Double(fields[2]) else { return nil }
            return (String(fields[1]), position, time)
        }
    }

    private func dropListener() {
        let listener = state.withLock { state in
            defer { state.listener = nil }
            return state.listener
        }
        if let listener { _ = try? listener.close().wait(within: store.patience) }
    }

    /// Brings every list notified since the last time to the position notified, if this instance holds it.
    private func followNotified() throws {
        let notified = state.withLock { state in
            defer { state.notified.removeAll(keepingCapacity: true) }
            return state.notified
        }
        guard !notified.isEmpty else { return }
        let oldest = notified.values.lazy.map(\.time).min() ?? 0
        registry.replication.setLag(versions: notified.count, seconds: Date().timeIntervalSince1970 - oldest)
        defer { registry.replication.setLag(versions: 0, seconds: 0) }
        for (list, (position, _)) in notified {
            try registry.follow(list, to: position)
        }
    }

    /// Compares every list held with the store, and brings each that differs up to date.
    private func sweep() throws {
        let held = registry.followedLists()
        var start = held.startIndex
        while start < held.endIndex {
            let end = min(start + Self.sweepBatch, held.endIndex)
            for (list, position) in try store.positions(differingFrom: Array(held[start..<end])) {
                try registry.follow(list, to: position)
            }
            start = end
        }
        state.withLock { $0.lastSweep = .now }
        registry.replication.caughtUp()
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
