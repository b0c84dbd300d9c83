internal import CLibPQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A libpq connection (`PGconn`) that this object owns: made when it is, closed (`PQfinish`) when it is released.
///
/// Synchronous, for a thread of its own: every call blocks until the server answers. libpq allows one thread at a
/// time on a connection, which is why the public connections that hold one are not `Sendable`.
final class LibPQConnection {
    let handle: OpaquePointer
    /// The URL as errors may show it, and what to remove from libpq's messages.
    let url: ConnectionURL

    /// Connects, waiting on the socket (`PQconnectStartParams`, `PQconnectPoll`) so that `timeout` bounds the whole
    /// start: name lookup aside, which libpq does before it returns.
    ///
    /// - Parameters:
    ///   - url: a libpq URL or key/value string; its own options win over the ones given here.
    ///   - replication: `replication=database`, the walsender's protocol for logical replication.
    ///   - applicationName: `application_name` unless the URL names one (shown in `pg_stat_activity`).
    ///   - timeout: how long the start may take.
    /// - Throws: ``PostgresError``: the server's code when it refused the connection (`28P01` a wrong password,
    ///   `3D000` no such database), ``SQLState/unableToConnect`` for libpq's own failures.
    init(url text: String, replication: Bool, applicationName: String, timeout: Duration) throws(PostgresError) {
        url = ConnectionURL(text)
        var options = [("dbname", text), ("fallback_application_name", applicationName), ("client_encoding", "UTF8")]
        if replication { options.append(("replication", "database")) }
        let started = Self.withCStrings(options.map(\.0)) { keywords in
            Self.withCStrings(options.map(\.1)) { values in PQconnectStartParams(keywords, values, 1) }
        }
        let context = "connecting to \(url.redacted)"
        guard let started else {
            throw PostgresError(
                sqlState: .unableToConnect, message: "libpq could not allocate a connection", context: context)
        }
        handle = started
        // Verbose, so that a refusal's message names its SQLSTATE (libpq gives no other way to it before a result).
        PQsetErrorVerbosity(handle, PQERRORS_VERBOSE)
        guard PQstatus(handle) != CONNECTION_BAD else { throw connectionError(context, .unableToConnect) }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var polling = PGRES_POLLING_WRITING
        while polling != PGRES_POLLING_OK {
            guard polling != PGRES_POLLING_FAILED else { throw connectionError(context, .unableToConnect) }
            let events = polling == PGRES_POLLING_READING ? Int16(POLLIN) : Int16(POLLOUT)
            guard try waitForSocket(events, until: deadline, context: context) else {
                throw PostgresError(
                    sqlState: .unableToConnect, message: "no connection within \(timeout)", context: context)
            }
            polling = PQconnectPoll(handle)
        }
        PQsetErrorVerbosity(handle, PQERRORS_DEFAULT)
    }

    deinit {
        PQfinish(handle)
    }

    /// Runs `sql` through the simple query protocol (`PQexec`): one statement or several separated by `;`, the
    /// result of the last one returned.
    ///
    /// - Throws: ``PostgresError`` when a statement fails or the connection is lost.
    func run(_ sql: String, context: @autoclosure () -> String) throws(PostgresError) -> LibPQResult {
        try checked(PQexec(handle, sql), context: context())
    }

    /// Runs one statement with text parameters (`PQexecParams`; `nil` for SQL's null), its columns as text.
    func run(
        _ sql: String, parameters: [String?], context: @autoclosure () -> String
    ) throws(PostgresError) -> LibPQResult {
        let result = Self.withCStrings(parameters) { values in
            PQexecParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        return try checked(result, context: context())
    }

    /// The columns `sql` would answer, without running it (`PQprepare` and `PQdescribePrepared` of the unnamed
    /// statement).
    func describe(_ sql: String, context: @autoclosure () -> String) throws(PostgresError) -> LibPQResult {
        _ = try checked(PQprepare(handle, "", sql, 0, nil), context: context())
        return try checked(PQdescribePrepared(handle, ""), context: context())
    }

    /// The next result of the command in progress (`PQgetResult`), checked; nil when there is no more.
    func nextResult(context: @autoclosure () -> String) throws(PostgresError) -> LibPQResult? {
        guard let result = PQgetResult(handle) else { return nil }
        return try checked(result, context: context())
    }

    /// The results of the command in progress read to the end, each checked: the first failure is thrown, after
    /// the rest are read (the connection is then ready for the next command).
    func finishResults(context: @autoclosure () -> String) throws(PostgresError) {
        var failure: PostgresError?
        while let result = PQgetResult(handle) {
            do throws(PostgresError) {
                _ = try checked(result, context: context())
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }

    /// Waits until the socket is ready for `events` (`POLLIN`, `POLLOUT`), or `deadline` passes.
    ///
    /// - Returns: false when `deadline` passed first.
    /// - Throws: ``PostgresError`` when the connection has no socket or `poll` fails.
    func waitForSocket(
        _ events: Int16, until deadline: ContinuousClock.Instant, context: @autoclosure () -> String
    ) throws(PostgresError) -> Bool {
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw connectionError(context(), .connectionFailure) }
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            let (seconds, attoseconds) = remaining.components
            // Rounded up: a remainder under a millisecond would otherwise poll for nothing until it passed.
            let milliseconds =
                remaining <= .zero
                ? 0 : min(seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000, 60_000)
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(milliseconds))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR {
                throw PostgresError(
                    sqlState: .connectionFailure, message: "poll failed (errno \(errno))", context: context())
            }
            if ready == 0 && remaining <= .zero { return false }
        }
    }

    /// The connection's own error (`PQerrorMessage`) as a ``PostgresError``.
    func connectionError(_ context: String, _ fallback: SQLState) -> PostgresError {
        PostgresError(connection: handle, fallback: fallback, context: context, url: url)
    }

    /// `result` owned, or the error it reports: any status but a command's, rows', or the start of a copy.
    private func checked(_ result: OpaquePointer?, context: String) throws(PostgresError) -> LibPQResult {
        guard let result else { throw connectionError(context, .connectionFailure) }
        let owned = LibPQResult(result)
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_COPY_OUT, PGRES_COPY_IN, PGRES_COPY_BOTH, PGRES_EMPTY_QUERY:
            return owned
        default:
            throw PostgresError(result: result, context: context, url: url)
        }
    }

    /// `body` given C copies of `strings` (nil for nil) and a nil after them, as libpq's arrays are.
    private static func withCStrings<Result>(
        _ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> Result
    ) -> Result {
        let copies = strings.map { $0.flatMap { strdup($0) } }
        defer { copies.forEach { free($0) } }
        return body(copies.map { $0.map { UnsafePointer($0) } } + [nil])
    }
}

/// A libpq result (`PGresult`) that this object owns, cleared when it is released. Values are read as text.
final class LibPQResult {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        PQclear(pointer)
    }

    var isCopyOut: Bool { PQresultStatus(pointer) == PGRES_COPY_OUT }
    var isCopyBoth: Bool { PQresultStatus(pointer) == PGRES_COPY_BOTH }

    /// The command tag (`INSERT 0 1`, `COMMIT`, `ROLLBACK`).
    var commandTag: String { String(cString: PQcmdStatus(pointer)) }

    var columns: [PostgresColumn] {
        (0..<PQnfields(pointer)).map { column in
            PostgresColumn(
                name: PQfname(pointer, column).map { String(cString: $0) } ?? "",
                typeOID: UInt32(PQftype(pointer, column)))
        }
    }

    /// Every row, each value as its text (`nil` for SQL's null).
    var rows: [[String?]] {
        let columnCount = PQnfields(pointer)
        return (0..<PQntuples(pointer)).map { row in
            (0..<columnCount).map { column in
                PQgetisnull(pointer, row, column) == 1 ? nil : String(cString: PQgetvalue(pointer, row, column))
            }
        }
    }
}
