internal import CLibPQ

/// A connection to PostgreSQL for plain SQL, through libpq: statements, queries whose values arrive as text, a
/// table copied row by row (`COPY … TO STDOUT`), and transactions that import a replication slot's snapshot.
///
/// Synchronous: every call blocks its thread until the server answers, which is what a source's follower (a
/// thread of its own) wants. Not `Sendable`: libpq allows one thread at a time on a connection; make it on the
/// thread that uses it. The connection closes when the object is released.
///
/// ```swift
/// let connection = try PostgresConnection(url: "postgres://quire:secret@db:5432/app")
/// let rows = try connection.query("SELECT id, title FROM messages WHERE owner = $1", ["ann"])
/// ```
public final class PostgresConnection {
    let connection: LibPQConnection

    /// Connects.
    ///
    /// - Parameters:
    ///   - url: `postgres://user:password@host:port/database` (options after `?`: `sslmode`,
    ///     `application_name`, …), or a key/value string (`host=db dbname=app`).
    ///   - applicationName: what `pg_stat_activity` shows, unless the URL names one.
    ///   - connectTimeout: how long the connection's start may take.
    /// - Throws: ``PostgresError``: `28P01` a wrong password, `3D000` no such database, `08001` no connection
    ///   made (a malformed URL, nothing listening, the timeout). Its texts show the URL without its password.
    public init(
        url: String, applicationName: String = "quire", connectTimeout: Duration = .seconds(10)
    ) throws(PostgresError) {
        connection = try LibPQConnection(
            url: url, replication: false, applicationName: applicationName, timeout: connectTimeout)
    }

    /// The URL connected to, its password replaced by `***`.
    public var redactedURL: String { connection.url.redacted }

    /// The server's version as a number (`150018` for 15.18).
    public var serverVersion: Int { Int(PQserverVersion(connection.handle)) }

    /// Runs `sql`: one statement, or several separated by `;` (run in one implicit transaction unless they
    /// manage their own).
    ///
    /// - Throws: ``PostgresError`` when a statement fails (those before it have taken effect only if they
    ///   committed) or the connection is lost.
    public func execute(_ sql: String) throws(PostgresError) {
        _ = try connection.run(sql, context: "running \(sql)")
    }

    /// The rows of one query, every value as its text.
    ///
    /// - Parameters:
    ///   - sql: one statement; `$1`, `$2`, … stand for `parameters`.
    ///   - parameters: the parameters' values as text (`nil` for SQL's null); none runs `sql` through the simple
    ///     query protocol, which also takes several statements and answers the last one's rows.
    /// - Throws: ``PostgresError``.
    /// - Complexity: O(*r*) in the size of the answer, which is held whole: stream a large one with
    ///   ``copy(_:row:)``.
    public func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> PostgresRows {
        let result =
            parameters.isEmpty
            ? try connection.run(sql, context: "running \(sql)")
            : try connection.run(sql, parameters: parameters, context: "running \(sql)")
        return PostgresRows(columns: result.columns, rows: result.rows, commandTag: result.commandTag)
    }

    /// The columns a query would answer (names and types), without running it.
    ///
    /// - Throws: ``PostgresError`` (`42P01` no such table, `42703` no such column).
    public func describe(_ sql: String) throws(PostgresError) -> [PostgresColumn] {
        try connection.describe(sql, context: "describing \(sql)").columns
    }

    /// Runs `body` in a transaction, committed when it returns, rolled back when it throws.
    ///
    /// With `snapshot`, the transaction is `REPEATABLE READ READ ONLY` and sees the database as that snapshot
    /// does (`SET TRANSACTION SNAPSHOT`): a replication slot's exported snapshot
    /// (``ReplicationConnection/createSlot(named:temporary:)``), so that a copy made in it and the changes the slot
    /// streams afterwards neither miss nor repeat a transaction. The snapshot can be imported only while the
    /// connection that exported it runs no other command.
    ///
    /// - Throws: ``PostgresError`` (`22023` or `0A000` when the snapshot is no longer valid; `25P02` when a
    ///   statement of `body` failed and the commit rolled the transaction back), or what `body` throws.
    @discardableResult
    public func transaction<Result>(snapshot: String? = nil, _ body: () throws -> Result) throws -> Result {
        try execute(snapshot == nil ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        let value: Result
        do {
            if let snapshot { try execute("SET TRANSACTION SNAPSHOT \(try quote(literal: snapshot))") }
            value = try body()
        } catch {
            _ = try? connection.run("ROLLBACK", context: "rolling back")
            throw error
        }
        let commit = try connection.run("COMMIT", context: "committing")
        // PostgreSQL answers the COMMIT of a failed transaction with a rollback, not an error.
        guard commit.commandTag == "COMMIT" else {
            throw PostgresError(
                sqlState: .inFailedTransaction, message: "the transaction failed earlier and was rolled back",
                context: "committing")
        }
        return value
    }

    /// `name` quoted as an SQL identifier (`"Messages"`), by libpq in the connection's encoding.
    ///
    /// - Throws: ``PostgresError`` when `name` is not valid in that encoding.
    public func quote(identifier name: String) throws(PostgresError) -> String {
        try escaped(name, identifier: true)
    }

    /// `text` quoted as an SQL string literal (`'it''s'`), by libpq in the connection's encoding.
    ///
    /// - Throws: ``PostgresError`` when `text` is not valid in that encoding.
    public func quote(literal text: String) throws(PostgresError) -> String {
        try escaped(text, identifier: false)
    }

    private func escaped(_ text: String, identifier: Bool) throws(PostgresError) -> String {
        let length = text.utf8.count
        let quoted =
            identifier
            ? PQescapeIdentifier(connection.handle, text, length) : PQescapeLiteral(connection.handle, text, length)
        guard let quoted else {
            throw connection.connectionError("quoting a name or a value", .characterNotInRepertoire)
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }
}
