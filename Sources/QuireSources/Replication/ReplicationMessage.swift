/// What the server sends in a logical replication stream (the CopyData messages of `START_REPLICATION`, the
/// manual's "Streaming Replication Protocol").
public enum ReplicationMessage: Hashable, Sendable {
    /// `w`: a piece of the log, here one pgoutput message.
    case xLogData(XLogData)
    /// `k`: the server's position and clock, and whether it wants a status update at once.
    case keepalive(PrimaryKeepalive)

    /// Reads one CopyData message of the stream.
    ///
    /// - Throws: ``ReplicationDecodingError`` when the bytes are not one of the two (an unknown kind, cut short,
    ///   a keepalive with bytes after its end).
    /// - Complexity: O(*n*) in the length of the message (the payload is copied).
    public init(decoding bytes: [UInt8]) throws(ReplicationDecodingError) {
        var reader = ByteReader(bytes, messageName: "replication")
        switch try reader.byte() {
        case UInt8(ascii: "w"):
            reader.messageName = "XLogData"
            let start = LSN(try reader.uint64())
            let end = LSN(try reader.uint64())
            let clock = PostgresTimestamp(rawValue: try reader.int64())
            self = .xLogData(XLogData(start: start, end: end, serverClock: clock, payload: reader.rest()))
        case UInt8(ascii: "k"):
            reader.messageName = "primary keepalive"
            let end = LSN(try reader.uint64())
            let clock = PostgresTimestamp(rawValue: try reader.int64())
            let reply = try reader.byte()
            guard reply <= 1 else { throw reader.failure("a reply flag of \(reply)") }
            try reader.expectEnd()
            self = .keepalive(PrimaryKeepalive(end: end, serverClock: clock, replyRequested: reply == 1))
        case let kind:
            throw ReplicationDecodingError(messageName: "replication", offset: 0, reason: "an unknown kind \(kind)")
        }
    }

    /// The message as the server sends it (for tests, and the fuzz target's round trip).
    public var encoded: [UInt8] {
        var writer = ByteWriter()
        switch self {
        case .xLogData(let data):
            writer.byte(UInt8(ascii: "w"))
            writer.uint64(data.start.rawValue)
            writer.uint64(data.end.rawValue)
            writer.int64(data.serverClock.rawValue)
            writer.bytes(data.payload)
        case .keepalive(let keepalive):
            writer.byte(UInt8(ascii: "k"))
            writer.uint64(keepalive.end.rawValue)
            writer.int64(keepalive.serverClock.rawValue)
            writer.byte(keepalive.replyRequested ? 1 : 0)
        }
        return writer.bytes
    }
}

/// `w`: one pgoutput message, where it sits in the log, and where the log ends on the server.
public struct XLogData: Hashable, Sendable {
    /// Where the data sits in the log: the position of the change, a Begin's transaction's first record, a
    /// Commit's end.
    public var start: LSN
    /// The end of the log on the server when it sent this: how far there is to go.
    public var end: LSN
    /// The server's clock when it sent this.
    public var serverClock: PostgresTimestamp
    /// The pgoutput message: ``PgOutput/Message/init(decoding:)`` reads it.
    public var payload: [UInt8]

    public init(start: LSN, end: LSN, serverClock: PostgresTimestamp, payload: [UInt8]) {
        self.start = start
        self.end = end
        self.serverClock = serverClock
        self.payload = payload
    }
}

/// `k`: the server's end of log and clock; when `replyRequested`, the server waits for a status update and ends
/// the connection after `wal_sender_timeout` without one.
public struct PrimaryKeepalive: Hashable, Sendable {
    /// The end of the log on the server.
    public var end: LSN
    /// The server's clock when it sent this.
    public var serverClock: PostgresTimestamp
    /// Whether the server asks for a status update at once.
    public var replyRequested: Bool

    public init(end: LSN, serverClock: PostgresTimestamp, replyRequested: Bool) {
        self.end = end
        self.serverClock = serverClock
        self.replyRequested = replyRequested
    }
}

/// `r`: what the client tells the server of its progress. For a logical slot, ``flushed`` is what counts: the
/// slot's `confirmed_flush_lsn`, the position up to which the server may forget the log. Send only a position
/// whose transactions are durably applied: a commit's ``PgOutput/Commit/endLSN`` once it is.
public struct StandbyStatusUpdate: Hashable, Sendable {
    /// The position received and written.
    public var written: LSN
    /// The position durably applied: the slot forgets the log before it.
    public var flushed: LSN
    /// The position applied (visible).
    public var applied: LSN
    /// The client's clock.
    public var clock: PostgresTimestamp
    /// Asks the server to answer at once with a keepalive.
    public var replyRequested: Bool

    /// A status update; `written` and `applied` are `flushed` unless given.
    public init(
        flushed: LSN, written: LSN? = nil, applied: LSN? = nil, clock: PostgresTimestamp = .now(),
        replyRequested: Bool = false
    ) {
        self.written = written ?? flushed
        self.flushed = flushed
        self.applied = applied ?? flushed
        self.clock = clock
        self.replyRequested = replyRequested
    }

    /// The message as the client sends it: `r`, three positions, the clock, the reply flag.
    public var encoded: [UInt8] {
        var writer = ByteWriter()
        writer.byte(UInt8(ascii: "r"))
        writer.uint64(written.rawValue)
        writer.uint64(flushed.rawValue)
        writer.uint64(applied.rawValue)
        writer.int64(clock.rawValue)
        writer.byte(replyRequested ? 1 : 0)
        return writer.bytes
    }
}
