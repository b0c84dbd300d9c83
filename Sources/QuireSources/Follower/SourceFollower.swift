import Dispatch
public import Logging
public import QuireCore
import Synchronization

/// Follows one source (API.md §2b): checks its table, makes its publication and slot when missing, copies the table
/// at the slot's snapshot when the store holds no copy of it, then applies each committed transaction of the log as
/// one write per list it touches, with the log position in the same transaction of the store (``SourceWriter``).
/// The slot is told a position only once the store holds it, so the database keeps the log Quire has not made
/// durable, and a restart (even after `SIGKILL`) goes on from the last transaction applied: none lost, none twice.
///
/// Runs on a thread of its own (libpq's calls block). A lost connection, the database restarting, a failed commit:
/// the follower connects again after a pause and goes on from the stored position. A refusal (the table or a column
/// it names gone) stops it: its lists keep what they had.
public final class SourceFollower: Sendable {
    public let source: SourceConfiguration
    public let statistics = SourceStatistics()
    let writer: any SourceWriter
    let limits: ListLimits
    let logger: Logger
    let queue: DispatchQueue
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    /// The pause before connecting again after a failure, doubled up to ``longestPause``.
    static let firstPause: Duration = .milliseconds(250)
    static let longestPause: Duration = .seconds(5)
    /// How long a read of the stream waits before the follower looks at its flags and sends its status.
    static let readTimeout: Duration = .milliseconds(200)
    /// How often the slot is told the position applied, and the retained log measured, when nothing asks sooner.
    static let statusInterval: Duration = .seconds(5)

    public init(source: SourceConfiguration, writer: any SourceWriter, limits: ListLimits, logger: Logger) {
        self.source = source
        self.writer = writer
        self.limits = limits
        var logger = logger
        logger[metadataKey: "source"] = "\(source.name)"
        self.logger = logger
        queue = DispatchQueue(label: "quire.source.\(source.name)")
    }

    /// Whether `list` is one of this source's (a name its template makes).
    public func makes(_ list: String) -> Bool { source.list.canMake(list) }

    // MARK: - Checking at start

    /// What stops `source` from being followed, checked against its database: every refusal of API.md §2b (each
    /// naming the source and the key), or the database's error when it cannot be reached or read.
    public static func refusals(of source: SourceConfiguration, limits: ListLimits) -> [SourceConfigurationError] {
        do {
            let database = try AppDatabase(source: source)
            let catalog = try database.catalog()
            let refusals = source.refusals(in: catalog)
            guard refusals.isEmpty, let table = catalog.table else { return refusals }
            let relation = relation(of: table, source: source)
            do {
                _ = try RowMapping(source: source, relation: relation, limits: limits)
            } catch {
                return [error]
            }
            return try database.publicationRefusal(columns: relation.columns.map(\.name)).map { [$0] } ?? []
        } catch {
            return [SourceConfigurationError(source: source.name, key: "url", reason: error.description)]
        }
    }

    /// The table's columns that the publication carries, in the table's order, with its key.
    static func relation(of table: SourceCatalog.Table, source: SourceConfiguration) -> SourceRelation {
        let published = Set(source.columns.published(primaryKey: table.primaryKey))
        return SourceRelation(
            columns: table.columns.filter { published.contains($0.name) }, primaryKey: table.primaryKey)
    }

    // MARK: - Running

    /// Starts following on the follower's thread.
    public func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        queue.async { [self] in
            run()
            stopped.signal()
        }
    }

    /// Stops following and returns once the follower's thread is done (a transaction being committed is committed
    /// first).
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        guard started.load(ordering: .relaxed) else { return }
        stopped.wait()
        stopped.signal()
    }

    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    private func run() {
        var pause = Self.firstPause
        while !isStopping {
            do {
                try follow(onProgress: { pause = Self.firstPause })
            } catch let refusal as SourceConfigurationError {
                logger.error("the source stopped: \(refusal.description)")
                statistics.stopReason.withLock { $0 = refusal.description }
                statistics.up.store(false, ordering: .relaxed)
                statistics.syncing.store(false, ordering: .relaxed)
                return
            } catch {
                if isStopping { break }
                logger.warning("following the source failed, connecting again in \(pause): \(error)")
            }
            statistics.up.store(false, ordering: .relaxed)
            var waited: Duration = .zero
            while waited < pause && !isStopping {
                Self.sleep(.milliseconds(50))
                waited += .milliseconds(50)
            }
            pause = min(pause * 2, Self.longestPause)
        }
        statistics.up.store(false, ordering: .relaxed)
    }

    /// The source's publication made to carry `columns`; a role that may not (it does not own the table) is a refusal
    /// that stops the source, naming what the owner must run.
    private static func ensurePublication(on database: AppDatabase, columns: [String]) throws {
        let failure: PostgresError
        do {
            try database.ensurePublication(columns: columns)
            return
        } catch {
            failure = error
        }
        if failure.sqlState == "42501", let refusal = try database.publicationRefusal(columns: columns) {
            throw refusal
        }
        throw failure
    }

    /// How often an instance that waits for the source's lock asks for it again.
    static let lockInterval: Duration = .seconds(1)

    /// Takes the source's lock on `database`'s connection, waiting while another instance holds it (counted as
    /// standby); `false` when the follower is stopped first.
    ///
    /// While it waits, the source is syncing here when the store holds no finished copy (the instance that follows
    /// copies the table): this instance's lists answer `503 source-syncing` as the copying instance's do, rather than
    /// the part of the copy committed so far.
    private func waitForLock(on database: AppDatabase) throws -> Bool {
        guard try !database.takeFollowerLock() else { return true }
        logger.info("another instance follows the source: this one takes over when it stops")
        statistics.standby.store(true, ordering: .relaxed)
        defer {
            statistics.standby.store(false, ordering: .relaxed)
            statistics.syncing.store(false, ordering: .relaxed)
        }
        while !isStopping {
            do {
                statistics.syncing.store(try writer.position(of: source.name) == nil, ordering: .relaxed)
            } catch {
                // A store that cannot be read now leaves the last answer.
            }
            var waited: Duration = .zero
            while waited < Self.lockInterval && !isStopping {
                Self.sleep(.milliseconds(50))
                waited += .milliseconds(50)
            }
            if try database.takeFollowerLock() {
                logger.info("taking the source over from the stored position")
                return true
            }
        }
        return false
    }

    static func sleep(_ duration: Duration) {
        let semaphore = DispatchSemaphore(value: 0)
        let nanoseconds =
            Int(duration.components.seconds) * 1_000_000_000
            + Int(duration.components.attoseconds / 1_000_000_000)
        _ = semaphore.wait(timeout: .now() + .nanoseconds(nanoseconds))
    }

    /// One connection's life: the source's lock (another instance holding it, this one waits to take over), check,
    /// publication, slot, copy when due, then the stream until an error or a stop.
    private func follow(onProgress: () -> Void) throws {
        let database = try AppDatabase(source: source)
        guard try waitForLock(on: database) else { return }
        let catalog = try database.catalog()
        if let refusal = source.refusals(in: catalog).first { throw refusal }
        guard let table = catalog.table else { return }
        let relation = Self.relation(of: table, source: source)
        let mapping = try RowMapping(source: source, relation: relation, limits: limits)
        try Self.ensurePublication(on: database, columns: relation.columns.map(\.name))
        let replication = try ReplicationConnection(
            url: source.url, applicationName: "quire source \(source.name)")
        var state = try writer.state(of: source.name)
        let slotExists = try database.slotExists()
        let index: RowIndex
        if state.position == nil || !slotExists {
            // A copy that did not finish, or a slot dropped by hand: the table is copied again from a new slot.
            if slotExists { try replication.dropSlot(named: source.slot) }
            index = RowIndex(resolve: mapping.place(recorded:))
            let slot = try replication.createSlot(named: source.slot)
            statistics.syncing.store(true, ordering: .relaxed)
            statistics.up.store(true, ordering: .relaxed)
            defer { statistics.syncing.store(false, ordering: .relaxed) }
            let copy = SourceCopy(follower: self, mapping: mapping, index: index, previous: state)
            try database.connection.transaction(snapshot: slot.snapshotName) {
                try copy.run(on: database.connection, position: slot.consistentPoint)
            }
            logger.info("the table is copied; following its log from \(slot.consistentPoint)")
            state = SourceState(position: slot.consistentPoint.rawValue)
        } else {
            index = RowIndex(recorded: state.rows, resolve: mapping.place(recorded:))
            state.rows = [:]
        }
        let applied = LSN(state.position ?? 0)
        statistics.appliedPosition.store(applied.rawValue, ordering: .relaxed)
        try replication.startReplication(slot: source.slot, at: applied, publications: [source.publication])
        statistics.up.store(true, ordering: .relaxed)
        onProgress()
        var stream = SourceStream(
            follower: self, replication: replication, database: database, mapping: mapping, table: table,
            index: index, applied: applied)
        try stream.run()
    }
}
