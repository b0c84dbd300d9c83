/// pgoutput, PostgreSQL's logical decoding plugin that its own logical replication uses: the messages of
/// protocol version 1 (the manual's "Logical Replication Message Formats"), read from the bytes of an XLogData's
/// payload and written back. Pure Swift: no connection, no clock.
///
/// A transaction arrives as Begin, then its changes (Insert, Update, Delete, Truncate; a Relation before a
/// table's first change on the connection and after its schema changes; a Type before a column of a type not
/// built in; an Origin when the transaction was replicated from elsewhere; a Message from
/// `pg_logical_emit_message` when the stream asked for them), then Commit. Only committed transactions are sent,
/// in commit order.
public enum PgOutput {
    /// One pgoutput message.
    public enum Message: Hashable, Sendable {
        /// `B`: a transaction begins.
        case begin(Begin)
        /// `C`: the transaction commits.
        case commit(Commit)
        /// `O`: the transaction came from another server through replication.
        case origin(Origin)
        /// `R`: a table's schema, before its first change on the connection and after any change to it.
        case relation(Relation)
        /// `Y`: a data type that is not built in, before a column of it.
        case type(DataType)
        /// `I`: a row inserted.
        case insert(Insert)
        /// `U`: a row updated.
        case update(Update)
        /// `D`: a row deleted.
        case delete(Delete)
        /// `T`: tables truncated.
        case truncate(Truncate)
        /// `M`: a logical decoding message (`pg_logical_emit_message`).
        case message(LogicalMessage)
    }

    /// `B`: a transaction begins.
    public struct Begin: Hashable, Sendable {
        /// The position of the transaction's commit record.
        public var finalLSN: LSN
        /// When it committed.
        public var commitTime: PostgresTimestamp
        /// Its transaction id.
        public var xid: UInt32

        public init(finalLSN: LSN, commitTime: PostgresTimestamp, xid: UInt32) {
            self.finalLSN = finalLSN
            self.commitTime = commitTime
            self.xid = xid
        }
    }

    /// `C`: the transaction commits.
    public struct Commit: Hashable, Sendable {
        /// Unused flags (0).
        public var flags: UInt8
        /// The position of the commit record.
        public var commitLSN: LSN
        /// The end of the commit record: what to confirm (``StandbyStatusUpdate/flushed``) once the transaction is
        /// applied.
        public var endLSN: LSN
        /// When it committed.
        public var commitTime: PostgresTimestamp

        public init(flags: UInt8 = 0, commitLSN: LSN, endLSN: LSN, commitTime: PostgresTimestamp) {
            self.flags = flags
            self.commitLSN = commitLSN
            self.endLSN = endLSN
            self.commitTime = commitTime
        }
    }

    /// `O`: the transaction came from another server through replication.
    public struct Origin: Hashable, Sendable {
        /// The commit's position on the origin server.
        public var commitLSN: LSN
        /// The origin's name (`pg_replication_origin`).
        public var name: String

        public init(commitLSN: LSN, name: String) {
            self.commitLSN = commitLSN
            self.name = name
        }
    }

    /// How a table identifies the old row of an update or a delete (`ALTER TABLE … REPLICA IDENTITY`).
    public enum ReplicaIdentity: UInt8, Hashable, Sendable {
        /// `d`: the primary key (the old key is sent when it changed, and for deletes).
        case `default` = 0x64
        /// `n`: nothing (updates and deletes of the table fail).
        case nothing = 0x6E
        /// `f`: the whole old row.
        case full = 0x66
        /// `i`: the columns of a chosen unique index.
        case index = 0x69
    }

    /// `R`: a table's schema as the stream sees it.
    public struct Relation: Hashable, Sendable {
        /// The table's OID: what its changes name it by.
        public var id: UInt32
        /// Its schema (empty for `pg_catalog`).
        public var namespace: String
        /// Its name.
        public var name: String
        /// How its old rows are identified.
        public var replicaIdentity: ReplicaIdentity
        /// Its published columns, in the order of every tuple of its changes.
        public var columns: [Column]

        public init(
            id: UInt32, namespace: String, name: String, replicaIdentity: ReplicaIdentity, columns: [Column]
        ) {
            self.id = id
            self.namespace = namespace
            self.name = name
            self.replicaIdentity = replicaIdentity
            self.columns = columns
        }
    }

    /// A column of a ``Relation``.
    public struct Column: Hashable, Sendable {
        /// Flags: 1 when the column is part of the replica identity (the key).
        public var flags: UInt8
        /// Its name.
        public var name: String
        /// The OID of its type.
        public var typeOID: UInt32
        /// Its type modifier (`atttypmod`: a `varchar(n)`'s length plus 4, -1 when none).
        public var typeModifier: Int32

        public init(flags: UInt8, name: String, typeOID: UInt32, typeModifier: Int32) {
            self.flags = flags
            self.name = name
            self.typeOID = typeOID
            self.typeModifier = typeModifier
        }

        /// Whether the column is part of the replica identity (the primary key, under `REPLICA IDENTITY DEFAULT`).
        public var isKey: Bool { flags & 1 != 0 }
    }

    /// `Y`: a data type that is not built in.
    public struct DataType: Hashable, Sendable {
        /// Its OID: what columns name it by.
        public var id: UInt32
        /// Its schema (empty for `pg_catalog`).
        public var namespace: String
        /// Its name.
        public var name: String

        public init(id: UInt32, namespace: String, name: String) {
            self.id = id
            self.namespace = namespace
            self.name = name
        }
    }

    /// `I`: a row inserted.
    public struct Insert: Hashable, Sendable {
        /// The table's OID (its ``Relation/id``).
        public var relationID: UInt32
        /// The new row.
        public var new: Tuple

        public init(relationID: UInt32, new: Tuple) {
            self.relationID = relationID
            self.new = new
        }
    }

    /// `U`: a row updated.
    public struct Update: Hashable, Sendable {
        /// The table's OID (its ``Relation/id``).
        public var relationID: UInt32
        /// The old row's identity: its key when the key changed (`K`), its whole row under `REPLICA IDENTITY FULL`
        /// (`O`), nil otherwise (the key is then the new row's).
        public var old: OldTuple?
        /// The new row; a TOASTed value the update did not change is ``Value/unchangedToast``.
        public var new: Tuple

        public init(relationID: UInt32, old: OldTuple?, new: Tuple) {
            self.relationID = relationID
            self.old = old
            self.new = new
        }
    }

    /// `D`: a row deleted.
    public struct Delete: Hashable, Sendable {
        /// The table's OID (its ``Relation/id``).
        public var relationID: UInt32
        /// The deleted row's identity: its key (`K`, the other columns null), or its whole row (`O`).
        public var old: OldTuple

        public init(relationID: UInt32, old: OldTuple) {
            self.relationID = relationID
            self.old = old
        }
    }

    /// The old row of an update or a delete.
    public enum OldTuple: Hashable, Sendable {
        /// `K`: the replica identity's columns (the others null).
        case key(Tuple)
        /// `O`: the whole old row (`REPLICA IDENTITY FULL`).
        case full(Tuple)

        /// The values, whichever the kind.
        public var tuple: Tuple {
            switch self {
            case .key(let tuple), .full(let tuple): tuple
            }
        }
    }

    /// `T`: tables truncated, in one statement.
    public struct Truncate: Hashable, Sendable {
        /// `CASCADE`, `RESTART IDENTITY`.
        public var options: TruncateOptions
        /// The tables' OIDs.
        public var relationIDs: [UInt32]

        public init(options: TruncateOptions, relationIDs: [UInt32]) {
            self.options = options
            self.relationIDs = relationIDs
        }
    }

    /// The options of a `TRUNCATE`.
    public struct TruncateOptions: OptionSet, Hashable, Sendable {
        public var rawValue: UInt8

        public init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        /// `TRUNCATE … CASCADE`.
        public static let cascade = TruncateOptions(rawValue: 1)
        /// `TRUNCATE … RESTART IDENTITY`.
        public static let restartIdentity = TruncateOptions(rawValue: 2)
    }

    /// `M`: a message a transaction (or no transaction) wrote to the log with `pg_logical_emit_message`.
    public struct LogicalMessage: Hashable, Sendable {
        /// Flags: 1 when the message is transactional (sent within its transaction, at its commit).
        public var flags: UInt8
        /// The message's position in the log.
        public var lsn: LSN
        /// The prefix it was written with.
        public var prefix: String
        /// Its content.
        public var content: [UInt8]

        public init(flags: UInt8, lsn: LSN, prefix: String, content: [UInt8]) {
            self.flags = flags
            self.lsn = lsn
            self.prefix = prefix
            self.content = content
        }

        /// Whether the message was written within a transaction (sent at its commit, between its Begin and Commit).
        public var isTransactional: Bool { flags & 1 != 0 }
    }
}
