import QuireCore

/// Transactions of the source's table read from the log and built, not yet committed: the follower commits them
/// together, in one transaction of the store (one sync of its disk) with the last one's position, as the write lane
/// commits HTTP writes in groups. Each keeps its own write of each list it touches, so each is still one version
/// of each such list, in commit order.
///
/// A transaction is built on the versions the batch's earlier ones made, and the row index holds its places once it
/// is built (``add(_:position:commitTime:)``): if the commit fails, the follower's stream ends and a new one reads the
/// index again from the store.
struct SourceBatch {
    /// The most transactions committed together: the writes of a batch hold their lists' locks until it is
    /// durable, and readers of those lists wait meanwhile.
    static let maximumTransactions = 256
    /// The most row changes committed together (a transaction bigger than this is committed alone, whole).
    static let maximumRows = 8_192
    /// The longest a transaction waits for others to join it while the log keeps sending.
    static let maximumDelay = Duration.milliseconds(20)

    private(set) var writes: [ListRegistry.QueuedWrite] = []
    /// Each list's version as the batch's transactions have made it.
    private(set) var versions: [String: ListVersion] = [:]
    /// The lists whose version in `versions` the registry numbers itself (created in the batch).
    private var unnumbered: Set<String> = []
    private var rows: [SourceProgress.Row] = []
    private var replacesRows = false
    /// The end of the last transaction in the batch.
    private(set) var position: LSN?
    /// Each transaction's commit time, for `quire_source_commit_to_apply_seconds`.
    private(set) var commitTimes: [PostgresTimestamp] = []
    private(set) var rowCounts: [String: Int] = [:]
    private var rowChanges = 0
    private var started = ContinuousClock.now

    var isEmpty: Bool { position == nil }
    var transactionCount: Int { commitTimes.count }

    /// Whether the batch is to be committed now rather than wait for more transactions.
    var isFull: Bool {
        commitTimes.count >= Self.maximumTransactions || rowChanges >= Self.maximumRows
            || versions.count >= Self.maximumTransactions || ContinuousClock.now - started >= Self.maximumDelay
    }

    /// The version of `list` the next transaction builds on, when one of the batch's transactions wrote it.
    func version(of list: String) -> ListVersion? {
        versions[list]
    }

    /// Whether the version the next transaction builds on for `list` is numbered as the registry numbers it (see
    /// ``SourceTransaction/isNumbered``).
    func isNumbered(_ list: String) -> Bool {
        !unnumbered.contains(list)
    }

    /// A transaction, finished, joins the batch; the row index then holds its places.
    mutating func add(_ transaction: SourceTransaction.Finished, position: LSN, commitTime: PostgresTimestamp) {
        let made = transaction.made
        if isEmpty { started = .now }
        writes += made.writes
        versions.merge(made.versions) { _, made in made }
        unnumbered.formUnion(made.unnumbered)
        let progress = transaction.progress
        // A `TRUNCATE` forgot the rows recorded before it: the store forgets them too.
        if progress.replacesRows {
            rows = []
            replacesRows = true
        }
        rows += progress.rows
        self.position = position
        commitTimes.append(commitTime)
        for (kind, count) in transaction.rowCounts {
            rowCounts[kind, default: 0] += count
            rowChanges += count
        }
        transaction.apply()
    }

    /// The batch's writes and what the store records with them (every row placed or removed, through the last
    /// transaction's end), moved out: the batch keeps what the next one builds on and what is counted once it is
    /// committed, and whoever commits the writes frees them (and the versions they replaced).
    mutating func handOff(source: String) -> (writes: [ListRegistry.QueuedWrite], progress: SourceProgress) {
        let progress = SourceProgress(
            source: source, position: position?.rawValue, replacesRows: replacesRows, rows: rows)
        defer {
            writes = []
            rows = []
        }
        return (writes, progress)
    }
}
