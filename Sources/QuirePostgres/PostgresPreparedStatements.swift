import Logging
import NIOCore
import PostgresNIO

extension PostgresConnection {
    /// The rows of `statement`, prepared on this connection the first time it runs there (postgres-nio keeps it for
    /// the connection's life): then PostgreSQL only binds and executes it, with a plan it keeps, where a statement
    /// sent with ``PostgresConnection/query(_:logger:file:line:)`` is parsed and planned every time.
    ///
    /// postgres-nio runs prepared statements from async code only; the store is called from threads that wait for
    /// the answer. The task runs on this connection's event loop (``EventLoopExecutor``), never on Swift's
    /// cooperative pool, whose threads the caller may be holding (the tests write from tasks): waiting for it is
    /// as safe as waiting for a future of ``PostgresConnection/query(_:logger:file:line:)``.
    ///
    /// - Note: postgres-nio keeps a failed preparation's error for the connection's life, and answers it to every
    ///   later run of the statement there: a connection on which a prepared statement failed is to be closed.
    func rows<Statement: PostgresPreparedStatement>(
        of statement: Statement, logger: Logger
    ) -> EventLoopFuture<[Statement.Row]> where Statement.Row: Sendable {
        let promise = eventLoop.makePromise(of: [Statement.Row].self)
        Task(executorPreference: EventLoopExecutor(eventLoop)) {
            do {
                var rows: [Statement.Row] = []
                for try await row in try await self.execute(statement, logger: logger) { rows.append(row) }
                promise.succeed(rows)
            } catch {
                promise.fail(error)
            }
        }
        return promise.futureResult
    }
}

/// Runs the jobs of a task on a NIO event loop, for ``PostgresConnection/rows(of:logger:)``.
final class EventLoopExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// The call of ``PostgresListStore/commitFunction`` (``CommitRequest/call(placing:)`` binds its arguments).
struct CommitCall: PostgresPreparedStatement {
    static let sql = """
        SELECT quire_commit(
            $1::text, $2::bigint, $3::bigint, $4::bigint, $5::text, $6::bytea, $7::bigint, $8::bigint,
            $9::text[], $10::text[],
            $11::text[], $12::bytea[], $13::bytea[], $14::bytea[],
            $15::text[], $16::bytea[], $17::bytea[],
            $18::smallint[], $19::text[], $20::bytea[], $21::text[], $22::bytea[],
            $23::text[], $24::bytea[])
        """
    typealias Row = Int64?

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) throws -> Int64? { try row.decode(Int64?.self) }
}

/// The stored positions of some sections and items of a list (the kept siblings new rows go between): one row
/// each, `0` for a section and `1` for an item, its id and its position.
struct SiblingPositions: PostgresPreparedStatement {
    static let sql = """
        SELECT 0::smallint, id, position FROM quire_section WHERE list = $1::text AND id = ANY ($2::text[])
        UNION ALL
        SELECT 1::smallint, id, position FROM quire_item WHERE list = $1::text AND id = ANY ($3::text[])
        """
    typealias Row = (Int16, String, ByteBuffer)

    let list: String
    let sections: [String]
    let items: [String]

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(list)
        bindings.append(sections)
        bindings.append(items)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
