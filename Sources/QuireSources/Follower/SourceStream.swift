import Dispatch
import Logging
import QuireCore
import Synchronization

/// The follower's stream: pgoutput messages read from the slot, each transaction gathered from its Begin to its
/// Commit, then applied as one write per list it touches with its commit's end as the source's position, and that
/// position told to the slot once the store holds it.
struct SourceStream {
    let follower: SourceFollower
    let replication: ReplicationConnection
    let database: AppDatabase
    private(set) var mapping: RowMapping
    let table: SourceCatalog.Table
    let index: RowIndex
    /// The end of the last transaction the store holds.
    private(set) var applied: LSN
    /// What the slot may be told is flushed: ``applied``, or the server's end of log when everything it sent is
    /// applied.
    private var confirmable: LSN

    /// The changes of the transaction being read, and its Begin.
    private var begin: PgOutput.Begin?
    private var changes: [PgOutput.Message] = []
    /// The OID of the source's table in the stream, once a Relation message named it.
    private var relationID: UInt32?
    private var lastStatus = ContinuousClock.now
    /// When the retained log was last measured and the table last checked against the source.
    private var lastCheck = ContinuousClock.now
    /// The lists this stream's writes were built on once since it started (so held as the store holds them).
    private let caughtUp = CaughtUpLists()
    /// Transactions built and not yet committed.
    private var batch = SourceBatch()
    /// The batch being committed meanwhile (its writes handed off), and its commit.
    private var committing: (batch: SourceBatch, commit: BatchCommit)?
    /// Where batches are committed.
    private let committer: DispatchQueue

    init(
        follower: SourceFollower, replication: ReplicationConnection, database: AppDatabase, mapping: RowMapping,
        table: SourceCatalog.Table, index: RowIndex, applied: LSN
    ) {
        self.follower = follower
        self.replication = replication
        self.database = database
        self.mapping = mapping
        self.table = table
        self.index = index
        self.applied = applied
        confirmable = applied
        committer = DispatchQueue(label: "quire.source.\(mapping.source.name).commit")
    }

    mutating func run() throws {
        // However the stream ends, its commit in flight ends first: the next stream reads the store's position and
        // rows, which that commit may still be writing.
        defer { _ = committing?.commit.outcome() }
        measure()
        while !follower.isStopping {
            // With transactions built, only what the log has sent already joins them: they are committed as soon
            // as it has sent nothing more (while they were being committed, the next batch gathered). A commit in
            // flight is waited for as soon as the log is quiet, so that its position is confirmed at once.
            let timeout = batch.isEmpty && committing == nil ? SourceFollower.readTimeout : .zero
            if let message = try replication.readMessage(timeout: timeout) {
                switch message {
                case .keepalive(let keepalive):
                    note(server: keepalive.end)
                    // Between transactions, with none waiting to be committed or being committed, everything the
                    // server has sent is applied: the log up to its end held nothing of the table, and the slot may
                    // let it go (else an idle table would keep the log of every other table's writes).
                    let told = max(applied, confirmable)
                    if begin == nil && batch.isEmpty && committing == nil {
                        confirmable = max(confirmable, keepalive.end)
                    }
                    if keepalive.replyRequested
                        || (confirmable > told && ContinuousClock.now - lastStatus >= .milliseconds(100))
                    {
                        try sendStatus()
                    }
                case .xLogData(let data):
                    note(server: data.end)
                    try handle(try PgOutput.Message(decoding: data.payload))
                }
                if batch.isFull { try commitBatch() }
            } else {
                try commitBatch()
            }
            // On its own clock: statuses sent sooner (commits, keepalives) must not put off the table's check.
            if ContinuousClock.now - lastCheck >= SourceFollower.statusInterval {
                try sendStatus()
                measure()
                try checkTable()
                lastCheck = .now
            }
        }
        try commitBatch()
        try settleCommit()
        try? replication.stopReplication()
    }

    /// The table checked against the source again: dropping a column the source names needs `CASCADE` (the
    /// publication's column list names it), which takes the table out of the publication, so the log says nothing
    /// more of it and no Relation message ever shows the column gone.
    private func checkTable() throws {
        if let refusal = mapping.source.refusals(in: try database.catalog()).first { throw refusal }
    }

    private func note(server position: LSN) {
        follower.statistics.serverPosition.store(
            max(position.rawValue, follower.statistics.serverPosition.load(ordering: .relaxed)), ordering: .relaxed)
    }

    private mutating func sendStatus() throws {
        try replication.sendStatus(StandbyStatusUpdate(flushed: max(applied, confirmable)))
        lastStatus = .now
    }

    /// The log the slot keeps, and the database's end of log (for the lag when the stream is idle).
    private func measure() {
        guard let positions = try? database.logPositions() else { return }
        note(server: positions.current)
        if let retained = positions.retainedBytes {
            follower.statistics.retainedBytes.store(retained, ordering: .relaxed)
        }
    }

    private mutating func handle(_ message: PgOutput.Message) throws {
        switch message {
        case .begin(let begin):
            self.begin = begin
            changes = []
        case .relation(let relation):
            guard relation.namespace == mapping.source.table.schema, relation.name == mapping.source.table.name else {
                return
            }
            relationID = relation.id
            let columns = relation.columns.map {
                SourceRelation.Column(name: $0.name, type: PostgresType(oid: $0.typeOID))
            }
            // A schema change: the mapping made again (a column the source names dropped stops the source).
            mapping = try RowMapping(
                source: mapping.source, relation: SourceRelation(columns: columns, primaryKey: table.primaryKey),
                limits: mapping.limits)
        case .insert, .update, .delete, .truncate:
            changes.append(message)
        case .commit(let commit):
            defer {
                begin = nil
                changes = []
            }
            // A transaction the store holds already (the slot had not heard of it before a restart).
            guard commit.endLSN > (batch.position ?? committing?.batch.position ?? applied) else { return }
            try build(commit)
        case .origin, .type, .message:
            return
        }
    }

    /// The transaction gathered, turned into one write per list on the versions the batch made so far, joins the
    /// batch (whole, however big: the batch is then full).
    private mutating func build(_ commit: PgOutput.Commit) throws {
        // The transaction, which reads the batch (a copy of it), ends before the batch grows: the batch's arrays are
        // then its own again, and are appended to rather than copied whole.
        let finished = try finish(commit)
        batch.add(finished, position: commit.endLSN, commitTime: commit.commitTime)
    }

    private func finish(_ commit: PgOutput.Commit) throws -> SourceTransaction.Finished {
        let mapping = self.mapping
        var transaction = SourceTransaction(
            source: mapping.source.name, index: index, limits: mapping.limits,
            sectionKey: { mapping.sectionKey(ofSection: $0) },
            current: { [writer = follower.writer, caughtUp, batch, inFlight = committing?.batch] list in
                if let made = batch.version(of: list) ?? inFlight?.version(of: list) { return made }
                return try caughtUp.version(of: list, from: writer)
            },
            isNumbered: { [batch, inFlight = committing?.batch] list in
                batch.isNumbered(list) && inFlight?.isNumbered(list) != false
            })
        for change in changes { try apply(change, to: &transaction) }
        return try transaction.finished(position: commit.endLSN.rawValue)
    }

    /// The batch's writes handed to the committer with its last transaction's end as the source's position, once the
    /// commit before it is over (``settleCommit()``): the next batch is read and built while it commits.
    private mutating func commitBatch() throws {
        try settleCommit()
        guard !batch.isEmpty else { return }
        let (writes, progress) = batch.handOff(source: mapping.source.name)
        committing = (batch, BatchCommit(writes, progress: progress, writer: follower.writer, on: committer))
        batch = SourceBatch()
    }

    /// Waits for the commit in flight, if any: its position is then applied, and the slot told.
    private mutating func settleCommit() throws {
        guard let (done, commit) = committing else { return }
        committing = nil
        let outcome = commit.outcome()
        if let failure = outcome.failure { throw SourceWriteFailed(error: failure) }
        guard let position = done.position else { return }
        applied = position
        let statistics = follower.statistics
        statistics.appliedPosition.store(applied.rawValue, ordering: .relaxed)
        statistics.transactions.add(done.transactionCount, ordering: .relaxed)
        statistics.commits.add(1, ordering: .relaxed)
        statistics.count(done.rowCounts)
        let now = outcome.committedAt.secondsSinceUnixEpoch
        for commitTime in done.commitTimes { statistics.record(commitToApply: now - commitTime.secondsSinceUnixEpoch) }
        if ContinuousClock.now - lastStatus >= .milliseconds(100) { try sendStatus() }
    }

    /// One row change applied to the transaction.
    private func apply(_ change: PgOutput.Message, to transaction: inout SourceTransaction) throws {
        switch change {
        case .insert(let insert):
            guard insert.relationID == relationID else { return }
            let row = texts(of: insert.new, unchangedFrom: nil)
            try place(row, tuple: insert.new, replacing: nil, in: &transaction)
        case .update(let update):
            guard update.relationID == relationID else { return }
            let newID = mapping.itemID(of: texts(of: update.new, unchangedFrom: nil))
            let oldID = update.old.map { mapping.itemID(of: texts(of: $0.tuple, unchangedFrom: nil)) } ?? newID
            guard case .success(let id) = oldID else { return skip(oldID) }
            let old = transaction.place(of: id)
            let row = texts(of: update.new, unchangedFrom: old)
            try place(row, tuple: update.new, replacing: old.map { (id, $0) }, in: &transaction)
        case .delete(let delete):
            guard delete.relationID == relationID else { return }
            guard case .success(let id) = mapping.itemID(of: texts(of: delete.old.tuple, unchangedFrom: nil)),
                let old = transaction.place(of: id)
            else { return }
            try transaction.delete(id, at: old)
        case .truncate(let truncate):
            guard let relationID, truncate.relationIDs.contains(relationID) else { return }
            try transaction.truncate()
        default:
            return
        }
    }

    /// A row's new values placed: inserted, or the update of the row at `old`; a row the lists' limits refuse is
    /// counted and left out (and removed from where it was).
    private func place(
        _ row: [String?], tuple: PgOutput.Tuple, replacing old: (id: String, place: RowPlace)?,
        in transaction: inout SourceTransaction
    ) throws {
        switch mapping.terms(of: row) {
        case .failure(let skipped):
            skip(Result<String, SkippedRow>.failure(skipped))
            if let old { try transaction.delete(old.id, at: old.place, counted: false) }
        case .success(var terms):
            terms = try keepingUnchanged(terms, tuple: tuple, held: old, in: &transaction)
            let place = mapping.place(of: row, terms: terms)
            if let old {
                try transaction.update(from: old.place, oldID: old.id, to: terms, place: place)
            } else {
                try transaction.insert(terms, place: place)
            }
        }
    }

    private func skip(_ outcome: Result<String, SkippedRow>) {
        guard case .failure(let skipped) = outcome else { return }
        follower.statistics.skipped.add(1, ordering: .relaxed)
        follower.logger.warning("\(skipped.description)")
    }

    /// The values of a tuple as text; an unchanged TOASTed value of a placing column from the row's place.
    private func texts(of tuple: PgOutput.Tuple, unchangedFrom old: RowPlace?) -> [String?] {
        var row = [String?](repeating: nil, count: mapping.rowWidth)
        for (position, value) in tuple.values.enumerated() where position < row.count {
            switch value {
            case .text: row[position] = value.string
            case .unchangedToast: row[position] = nil
            case .null, .binary: row[position] = nil
            }
        }
        if let old {
            for (name, position) in mapping.placingColumns where position < tuple.count {
                if case .unchangedToast = tuple[position], let value = old.value(of: name) { row[position] = value }
            }
        }
        return row
    }

    /// `terms` with each `data` value the update left unchanged (a TOASTed value the log does not repeat) taken from
    /// the item held.
    private func keepingUnchanged(
        _ terms: RowTerms, tuple: PgOutput.Tuple, held old: (id: String, place: RowPlace)?,
        in transaction: inout SourceTransaction
    ) throws -> RowTerms {
        guard let old else { return terms }
        let unchanged = mapping.dataColumns.filter { column in
            column.index < tuple.count && tuple[column.index] == .unchangedToast
        }
        guard !unchanged.isEmpty, case .object(var data) = terms.item.data,
            case .object(let heldData)? = try transaction.heldItem(old.id, in: old.place.list)?["data"]
        else { return terms }
        for column in unchanged { data[column.name] = heldData[column.name] ?? .null }
        return RowTerms(
            list: terms.list, item: SourceItem(id: terms.item.id, type: terms.item.type, data: .object(data)),
            section: terms.section, itemKey: terms.itemKey, sectionKey: terms.sectionKey)
    }
}

/// The lists a stream has built writes on since it started. A list's first write is built on the store's latest
/// version of it (``SourceWriter/latestVersion(of:)``): in a cluster, the instance that followed the source before may
/// have committed versions this one has not replayed yet. After that this follower is the list's only writer, and
/// the version held is the store's.
final class CaughtUpLists {
    private var names = Set<String>()

    func version(of list: String, from writer: any SourceWriter) throws -> ListVersion? {
        guard names.contains(list) else {
            let version = try writer.latestVersion(of: list)
            names.insert(list)
            return version
        }
        return try writer.version(of: list)
    }
}
