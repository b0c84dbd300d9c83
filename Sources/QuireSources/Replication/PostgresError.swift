/// A SQLSTATE: the five-character code PostgreSQL gives every error it reports (the appendix "PostgreSQL Error
/// Codes" of its manual), or the standard code of its class for a failure libpq finds itself (see
/// ``PostgresError``). Compare with the constants below, or by class (`errorClass == "08"`: the connection).
public struct SQLState: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The five characters.
    public let rawValue: String

    /// - Parameter rawValue: the five characters.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        rawValue = value
    }

    /// The first two characters: the class (`08` connection exception, `28` authorization, `42` syntax or access,
    /// `55` object not in prerequisite state, `57` operator intervention).
    public var errorClass: Substring { rawValue.prefix(2) }

    public var description: String { rawValue }

    /// `08001`: no connection was made (a malformed URL, no server listening, the connect timeout).
    public static let unableToConnect: SQLState = "08001"
    /// `08006`: a connection that was made failed (closed by the server or the network).
    public static let connectionFailure: SQLState = "08006"
    /// `08P01`: a message broke the protocol (from the server, or a reply of a shape the command does not have).
    public static let protocolViolation: SQLState = "08P01"
    /// `28000`: the server refused the role (no `pg_hba.conf` entry, no such role).
    public static let invalidAuthorization: SQLState = "28000"
    /// `28P01`: a wrong password.
    public static let invalidPassword: SQLState = "28P01"
    /// `3D000`: no such database.
    public static let invalidCatalogName: SQLState = "3D000"
    /// `22021`: a text that is not valid in the connection's encoding.
    public static let characterNotInRepertoire: SQLState = "22021"
    /// `25P02`: the transaction failed earlier and its commit rolled it back.
    public static let inFailedTransaction: SQLState = "25P02"
    /// `42501`: the role lacks a privilege (`REPLICATION`, `SELECT` on the table).
    public static let insufficientPrivilege: SQLState = "42501"
    /// `42601`: a syntax error.
    public static let syntaxError: SQLState = "42601"
    /// `42602`: an invalid name (a slot name with characters outside `[a-z0-9_]`).
    public static let invalidName: SQLState = "42602"
    /// `42704`: no such object (a replication slot, a publication).
    public static let undefinedObject: SQLState = "42704"
    /// `42710`: the object exists already (a replication slot of that name).
    public static let duplicateObject: SQLState = "42710"
    /// `42P01`: no such table.
    public static let undefinedTable: SQLState = "42P01"
    /// `55000`: the object is not in the state the command needs (`wal_level` is not `logical`).
    public static let objectNotInPrerequisiteState: SQLState = "55000"
    /// `55006`: the object is in use (a slot another connection streams from).
    public static let objectInUse: SQLState = "55006"
    /// `57014`: the statement was cancelled.
    public static let queryCanceled: SQLState = "57014"
    /// `57P01`: an administrator or a shutdown ended the connection.
    public static let adminShutdown: SQLState = "57P01"
}

/// A PostgreSQL error: what the server reported (its SQLSTATE and fields), or a failure libpq found itself, with
/// what Quire was doing when it happened.
///
/// libpq's own failures carry no code from the server; they get their class's standard one, as JDBC drivers give
/// them: ``SQLState/unableToConnect`` when no connection was made (a malformed URL, nothing listening, the connect
/// timeout), ``SQLState/connectionFailure`` when a connection was lost, ``SQLState/protocolViolation`` for a reply
/// that does not have the shape its command promises. An error during the connection's start (a wrong password)
/// has the server's code.
///
/// No password appears in an error: a URL's password is replaced by `***` in ``context`` and wherever libpq's
/// message would repeat it (a malformed URL's, quoting the part it could not read).
public struct PostgresError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The SQLSTATE.
    public var sqlState: SQLState
    /// The server's severity (`ERROR`, `FATAL`, `PANIC`), or nil for libpq's own failures.
    public var severity: String?
    /// The primary message: the server's, or libpq's.
    public var message: String
    /// The server's detail, when it gave one.
    public var detail: String?
    /// The server's hint, when it gave one.
    public var hint: String?
    /// What was asked when it failed: `connecting to postgres://quire:***@db:5432/app`,
    /// `running CREATE_REPLICATION_SLOT "quire_inbox" LOGICAL pgoutput EXPORT_SNAPSHOT`.
    public var context: String

    /// An error made of its parts.
    public init(
        sqlState: SQLState, severity: String? = nil, message: String, detail: String? = nil, hint: String? = nil,
        context: String
    ) {
        self.sqlState = sqlState
        self.severity = severity
        self.message = message
        self.detail = detail
        self.hint = hint
        self.context = context
    }

    /// One line or a few: `context: message (SQLSTATE 42704)`, then the detail and the hint.
    public var description: String {
        var text = "\(context): \(message) (SQLSTATE \(sqlState))"
        if let detail { text += "\nDETAIL: \(detail)" }
        if let hint { text += "\nHINT: \(hint)" }
        return text
    }
}
