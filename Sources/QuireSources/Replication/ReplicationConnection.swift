internal import CLibPQ

/// A logical replication connection (`replication=database`) to PostgreSQL through libpq: the commands of the
/// walsender (`IDENTIFY_SYSTEM`, `CREATE_REPLICATION_SLOT`, `DROP_REPLICATION_SLOT`, `START_REPLICATION`) and the
/// stream of the log it then sends (``readMessage(timeout:)``, ``sendStatus(_:)``, ``stopReplication(timeout:)``,
/// in ReplicationConnection+Stream.swift).
///
/// Synchronous, for a thread of its own, as ``PostgresConnection`` is; not `Sendable`. The role needs the
/// `REPLICATION` attribute (or to be a superuser), and the server `wal_level = logical`.
///
/// ```swift
/// let replication = try ReplicationConnection(url: url)
/// let slot = try replication.createSlot(named: "quire_inbox")
/// try copier.transaction(snapshot: slot.snapshotName) { try copier.copy("SELECT id, title FROM messages") { … } }
/// try replication.startReplication(slot: "quire_inbox", at: slot.consistentPoint, publications: ["quire_inbox"])
/// while let message = try replication.readMessage(timeout: .seconds(1)) { … }
/// ```
public final class ReplicationConnection {
    let connection: LibPQConnection
    /// Whether the connection is in the stream (CopyBoth) since `START_REPLICATION`.
    public internal(set) var isStreaming = false

    /// Connects with `replication=database` to the URL's database.
    ///
    /// - Parameters:
    ///   - url: as ``PostgresConnection/init(url:applicationName:connectTimeout:)`` takes it.
    ///   - applicationName: what `pg_stat_replication` shows, unless the URL names one.
    ///   - connectTimeout: how long the connection's start may take.
    /// - Throws: ``PostgresError`` (`28000` when `pg_hba.conf` has no entry for a replication connection of the
    ///   role, `28P01` a wrong password, `08001` no connection made).
    public init(
        url: String, applicationName: String = "quire", connectTimeout: Duration = .seconds(10)
    ) throws(PostgresError) {
        connection = try LibPQConnection(
            url: url, replication: true, applicationName: applicationName, timeout: connectTimeout)
    }

    /// The URL connected to, its password replaced by `***`.
    public var redactedURL: String { connection.url.redacted }

    /// `IDENTIFY_SYSTEM`: the server's system identifier, timeline and current end of log.
    ///
    /// - Throws: ``PostgresError``.
    public func identifySystem() throws(PostgresError) -> ReplicationSystem {
        let command = "IDENTIFY_SYSTEM"
        let row = try singleRow(command, columns: 4)
        guard let systemID = row[0], let timeline = row[1].flatMap({ UInt32($0) }),
            let position = row[2].flatMap(LSN.init)
        else {
            throw PostgresError.protocolViolation("an answer without its values", context: command, url: connection.url)
        }
        return ReplicationSystem(systemID: systemID, timeline: timeline, position: position, database: row[3])
    }

    /// `CREATE_REPLICATION_SLOT name [TEMPORARY] LOGICAL pgoutput EXPORT_SNAPSHOT`: a slot that keeps the log
    /// from its consistent point on, and a snapshot of the database at that point.
    ///
    /// **The snapshot is valid only until this connection runs its next command** (``startReplication(slot:at:publications:messages:)``
    /// included) or closes: import it on another connection first
    /// (``PostgresConnection/transaction(snapshot:_:)``) and copy there. The copy then sees exactly the
    /// transactions committed before the consistent point, and the stream from it exactly those after. One
    /// exception, PostgreSQL's: `TRUNCATE` is not MVCC-safe, so a table truncated after the consistent point but
    /// before the copy reads it copies empty; the stream's Truncate then empties it anyway.
    ///
    /// - Parameters:
    ///   - name: the slot's name (`[a-z0-9_]`, at most 63 characters).
    ///   - temporary: a slot dropped when this connection closes.
    /// - Throws: ``PostgresError``: `42710` a slot of that name exists, `42602` an invalid name, `55000`
    ///   `wal_level` is not `logical`, `53400` no free slot (`max_replication_slots`), `42501` no `REPLICATION`.
    public func createSlot(named name: String, temporary: Bool = false) throws(PostgresError) -> ReplicationSlot {
        let command =
            "CREATE_REPLICATION_SLOT \(Self.quoted(name))\(temporary ? " TEMPORARY" : "") LOGICAL pgoutput EXPORT_SNAPSHOT"
        let row = try singleRow(command, columns: 4)
        guard let slotName = row[0], let consistentPoint = row[1].flatMap(LSN.init), let snapshotName = row[2] else {
            throw PostgresError.protocolViolation("an answer without its values", context: command, url: connection.url)
        }
        return ReplicationSlot(
            name: slotName, consistentPoint: consistentPoint, snapshotName: snapshotName, outputPlugin: row[3] ?? "")
    }

    /// `DROP_REPLICATION_SLOT name [WAIT]`: the server no longer keeps the log for the slot.
    ///
    /// - Parameters:
    ///   - name: the slot's name.
    ///   - wait: when another connection streams from the slot, wait until it stops instead of failing.
    /// - Throws: ``PostgresError``: `42704` no such slot, `55006` the slot is in use (without `wait`).
    public func dropSlot(named name: String, wait: Bool = false) throws(PostgresError) {
        let command = "DROP_REPLICATION_SLOT \(Self.quoted(name))\(wait ? " WAIT" : "")"
        _ = try connection.run(command, context: "running \(command)")
    }

    /// `START_REPLICATION SLOT name LOGICAL position (proto_version '1', publication_names '…')`: the server
    /// streams the transactions committed after `position` (and after what the slot has confirmed), for the tables
    /// of `publications`, until ``stopReplication(timeout:)``.
    ///
    /// - Parameters:
    ///   - slot: the slot's name.
    ///   - position: where to start: the slot's consistent point after ``createSlot(named:temporary:)``, the last
    ///     applied commit's end after a restart, or ``LSN/invalid`` for where the slot stands.
    ///   - publications: the publications whose tables are streamed.
    ///   - messages: also stream `pg_logical_emit_message`'s messages (``PgOutput/Message/message(_:)``).
    /// - Throws: ``PostgresError``: `42704` no such slot or publication, `55006` the slot is in use.
    public func startReplication(
        slot: String, at position: LSN = .invalid, publications: [String], messages: Bool = false
    ) throws(PostgresError) {
        precondition(!isStreaming, "START_REPLICATION while the connection streams")
        // publication_names is a list of identifiers in a string literal: each name quoted as an identifier,
        // then the list quoted as the walsender's literals are (quotes doubled, backslashes as they are).
        let names = publications.map(Self.quoted).joined(separator: ",")
        var options = ["proto_version '1'", "publication_names \(Self.literal(names))"]
        if messages { options.append("messages 'true'") }
        let command =
            "START_REPLICATION SLOT \(Self.quoted(slot)) LOGICAL \(position) (\(options.joined(separator: ", ")))"
        let result = try connection.run(command, context: "running \(command)")
        guard result.isCopyBoth else {
            throw PostgresError.protocolViolation(
                "the server answered \(result.commandTag) instead of starting the stream", context: command,
                url: connection.url)
        }
        isStreaming = true
    }

    /// The one row of a command's answer, with `columns` values.
    private func singleRow(_ command: String, columns: Int) throws(PostgresError) -> [String?] {
        precondition(!isStreaming, "\(command) while the connection streams")
        let rows = try connection.run(command, context: "running \(command)").rows
        guard rows.count == 1, rows[0].count >= columns else {
            throw PostgresError.protocolViolation(
                "\(rows.count) rows of \(rows.first?.count ?? 0) columns where one row of \(columns) was due",
                context: command, url: connection.url)
        }
        return rows[0]
    }

    /// `name` as a quoted identifier of the walsender's grammar (double quotes, doubled inside).
    static func quoted(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    /// `text` as a string literal of the walsender's grammar (single quotes, doubled inside; no escapes).
    static func literal(_ text: String) -> String {
        "'" + text.replacing("'", with: "''") + "'"
    }
}

/// What `IDENTIFY_SYSTEM` answers.
public struct ReplicationSystem: Hashable, Sendable {
    /// The cluster's unique identifier (the same on its physical standbys).
    public var systemID: String
    /// The current timeline.
    public var timeline: UInt32
    /// The current end of the log (where the log is flushed to).
    public var position: LSN
    /// The database connected to.
    public var database: String?

    public init(systemID: String, timeline: UInt32, position: LSN, database: String?) {
        self.systemID = systemID
        self.timeline = timeline
        self.position = position
        self.database = database
    }
}

/// A slot `CREATE_REPLICATION_SLOT` made.
public struct ReplicationSlot: Hashable, Sendable {
    /// The slot's name.
    public var name: String
    /// The position from which the slot streams: transactions committed after it.
    public var consistentPoint: LSN
    /// The exported snapshot (`SET TRANSACTION SNAPSHOT`), valid until the creating connection's next command.
    public var snapshotName: String
    /// The output plugin (`pgoutput`).
    public var outputPlugin: String

    public init(name: String, consistentPoint: LSN, snapshotName: String, outputPlugin: String) {
        self.name = name
        self.consistentPoint = consistentPoint
        self.snapshotName = snapshotName
        self.outputPlugin = outputPlugin
    }
}
