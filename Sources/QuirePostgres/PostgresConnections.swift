import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// Where the PostgreSQL store connects, parsed from `storage.url` (`postgres://user:password@host:port/db`).
public struct PostgresSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    /// Connections kept for commits and reads (the change feed and the notifier have one more each): as many
    /// as the service has write lanes, so that writes to different lists commit side by side and PostgreSQL
    /// groups their flushes: a smaller pool makes many producers queue for a connection while the server could
    /// flush more commits at once.
    public var poolSize = 16
    /// The longest a statement may run (PostgreSQL's `statement_timeout`), and the longest a connection
    /// attempt may take.
    public var statementTimeoutSeconds = 5.0
    /// Changes kept in the log, about, for instances that fall behind; a list whose missing changes are no longer
    /// kept is read again whole.
    public var logRetention = 100_000

    /// Parses `postgres://` (or `postgresql://`) URLs.
    ///
    /// - Throws: a description of what is wrong with the URL (never the password).
    public init(url: String) throws(PostgresStoreError) {
        guard let components = URLComponents(string: url),
            components.scheme == "postgres" || components.scheme == "postgresql"
        else { throw PostgresStoreError("storage.url must be a postgres:// URL") }
        guard let host = components.host, !host.isEmpty else {
            throw PostgresStoreError("storage.url names no host")
        }
        self.host = host
        port = components.port ?? 5432
        user = components.user ?? "postgres"
        password = components.password
        let path = components.path.drop { $0 == "/" }
        database = path.isEmpty ? user : String(path)
    }

    var configuration: PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: .disable)
        configuration.options.connectTimeout = .milliseconds(Int64(statementTimeoutSeconds * 1000))
        configuration.options.additionalStartupParameters = [
            ("statement_timeout", String(Int(statementTimeoutSeconds * 1000))),
            // A safety net: a transaction left open (a conflict's, if its write were never ended) lets go of
            // its locks instead of holding up every other instance's writes of that list.
            ("idle_in_transaction_session_timeout", String(Int(statementTimeoutSeconds * 4000))),
            ("application_name", "quire"),
        ]
        return configuration
    }

    /// The URL without its password, for logs.
    public var redacted: String { "postgres://\(user)@\(host):\(port)/\(database)" }
}

/// Why the PostgreSQL store could not do what it was asked.
public struct PostgresStoreError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// A bounded set of connections to PostgreSQL for synchronous callers.
///
/// Hand-written rather than postgres-nio's `PostgresClient` on purpose: the store protocol is synchronous
/// (the registry commits under a list's lock, on libmicrohttpd's threads), and `PostgresClient` is async
/// only, so each call would block a thread on a Swift concurrency task, which can starve the cooperative
/// pool (two threads on two cores) when callers are themselves tasks (the tests). Waiting on postgres-nio's
/// `EventLoopFuture`s from a thread that is not an event loop never needs the pool. What this adds is a
/// list of idle connections and a count: a connection is made when none is idle (up to `poolSize`), and one
/// that failed is closed and not reused.
final class PostgresConnections: Sendable {
    let settings: PostgresSettings
    private let logger: Logger
    private let group: any EventLoopGroup
    private let state = Mutex(State())
    /// Admits at most `poolSize` callers at a time; the others wait their turn (up to the statement timeout).
    private let slots: DispatchSemaphore
    private let nextID = Atomic<Int>(1)

    private struct State {
        var idle: [PostgresConnection] = []
        var closed = false
    }

    init(settings: PostgresSettings, logger: Logger, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton)
    {
        self.settings = settings
        self.logger = logger
        self.group = group
        slots = DispatchSemaphore(value: max(1, settings.poolSize))
    }

    deinit { close() }

    /// The longest any wait for PostgreSQL lasts: its own statement timeout, plus time for the answer to arrive.
    var patience: Double { settings.statementTimeoutSeconds + 2 }

    /// A new connection, not from the pool (the change feed's).
    func connect() throws -> PostgresConnection {
        do {
            return try PostgresConnection.connect(
                on: group.next(), configuration: settings.configuration,
                id: nextID.add(1, ordering: .relaxed).newValue, logger: logger
            ).wait(within: patience)
        } catch {
            throw PostgresStoreError("cannot connect to \(settings.redacted): \(Self.describe(error))")
        }
    }

    /// Runs `body` on a pooled connection. A connection on which `body` threw anything but a server's
    /// refusal of a statement (the connection itself failed) is closed rather than returned.
    func with<Result>(_ body: (PostgresConnection) throws -> Result) throws -> Result {
        let connection = try acquire()
        do {
            let result = try body(connection)
            release(connection)
            return result
        } catch {
            discard(connection, after: error)
            throw error
        }
    }

    /// A connection of the pool, for a caller that gives it back with ``release(_:)`` or
    /// ``discard(_:after:)``; waits for one while `poolSize` are in use (up to the statement timeout).
    func acquire() throws -> PostgresConnection {
        guard slots.wait(timeout: .now() + settings.statementTimeoutSeconds) == .success else {
            throw PostgresStoreError(
                "every connection to \(settings.redacted) stayed busy for \(settings.statementTimeoutSeconds) s")
        }
        let pooled = state.withLock { state -> PostgresConnection? in
            while let connection = state.idle.popLast() {
                if !connection.isClosed { return connection }
            }
            return nil
        }
        do {
            return try pooled ?? connect()
        } catch {
            slots.signal()
            throw error
        }
    }

    /// Gives back a connection outside any transaction.
    func release(_ connection: PostgresConnection) {
        defer { slots.signal() }
        let keep = state.withLock { state in
            guard !state.closed, !connection.isClosed else { return false }
            state.idle.append(connection)
            return true
        }
        if !keep { _ = try? connection.close().wait(within: patience) }
    }

    /// Gives back a connection after `error`: a server's refusal of a statement leaves the connection
    /// usable once its transaction is rolled back; anything else (the connection failed) closes it, and so does
    /// any error when `reusable` is false (one that ran prepared statements: see
    /// ``PostgresConnection/rows(of:logger:)``).
    func discard(_ connection: PostgresConnection, after error: any Error, reusable: Bool = true) {
        if reusable, let error = error as? PSQLError, error.code == .server, !connection.isClosed,
            (try? connection.query("ROLLBACK", logger: logger).wait(within: patience)) != nil
        {
            release(connection)
        } else {
            _ = try? connection.close().wait(within: patience)
            slots.signal()
        }
    }

    /// Closes every idle connection; later calls connect anew (a closed pool does not pool).
    func close() {
        let idle = state.withLock { state in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        for connection in idle { _ = try? connection.close().wait(within: patience) }
    }

    /// An error as a line for logs and problem details: the server's message and SQLSTATE when it has one.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let info = error.serverInfo {
                return "\(info[.message] ?? "error") (SQLSTATE \(info[.sqlState] ?? "?"))"
            }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    /// The SQLSTATE of a server error (`23505`: a unique constraint), or `nil`.
    static func sqlState(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}

extension EventLoopFuture where Value: Sendable {
    /// The future's value, waiting at most `seconds`: a query on a connection whose server went away without
    /// closing it (a stopped machine, a cut network) never completes, and a write waits for it while holding
    /// its list's lock and one of libmicrohttpd's threads. Past the deadline the caller's connection is
    /// discarded (closed), which fails whatever it still had in flight.
    ///
    /// - Throws: the future's error, or ``PostgresStoreError`` when the deadline passes.
    func wait(within seconds: Double) throws -> Value {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Value, any Error>?>(nil)
        whenComplete { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success else {
            throw PostgresStoreError("PostgreSQL did not answer within \(seconds) s")
        }
        return try outcome.withLock { $0! }.get()
    }
}
