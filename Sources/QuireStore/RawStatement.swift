import GRDB
internal import GRDBSQLite

/// One of the connection's cached statements, bound, stepped and reset through SQLite's C interface.
///
/// Hand-written for the write path only: there GRDB's `execute(arguments:)` (each argument boxed as a
/// `DatabaseValueConvertible`, copied into a `Data`, validated, then bound) and its `BEGIN`/`COMMIT`, compiled
/// anew on every transaction, cost more than SQLite's own work (perf, one-item inserts at 64 producers: 22% of
/// the server's time for 5 statements). Everything else in the store goes through GRDB.
struct RawStatement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer?

    /// The statement `sql` of `db`, compiled once per connection (GRDB's statement cache).
    init(_ db: Database, _ sql: String) throws {
        handle = try db.cachedStatement(sql: sql).sqliteStatement
        connection = db.sqliteConnection
    }

    /// SQLite copies what is bound (`SQLITE_TRANSIENT`), so that no buffer has to outlive the call.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ index: Int32, _ value: Int) {
        sqlite3_bind_int64(handle, index, Int64(value))
    }

    func bind(_ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) { chars in
                // A null pointer would bind NULL: an empty text is bound from a literal.
                guard let base = chars.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, nil) }
                return sqlite3_bind_text(handle, index, base, Int32(chars.count), Self.transient)
            }
        }
    }

    /// `nil` binds NULL; an empty blob stays a blob, not NULL.
    func bind(_ index: Int32, blob bytes: [UInt8]?) {
        guard let bytes else {
            sqlite3_bind_null(handle, index)
            return
        }
        bytes.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress {
                _ = sqlite3_bind_blob(handle, index, base, Int32(buffer.count), Self.transient)
            } else {
                _ = sqlite3_bind_zeroblob(handle, index, 0)
            }
        }
    }

    /// Steps the statement to its end.
    func run() throws {
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            if code != SQLITE_ROW { throw failure(code) }
        }
    }

    /// The first column of the first row as bytes, `nil` when there is no row.
    func firstBlob() throws -> [UInt8]? {
        try firstRow {
            let count = Int(sqlite3_column_bytes(handle, 0))
            guard count > 0, let start = sqlite3_column_blob(handle, 0) else { return [] }
            return Array(UnsafeRawBufferPointer(start: start, count: count))
        }
    }

    /// The first column of the first row as an integer, `nil` when there is no row.
    func firstInteger() throws -> Int64? {
        try firstRow { sqlite3_column_int64(handle, 0) }
    }

    /// The first column of the first row as an integer, `.some(nil)` when it is NULL, `nil` when there is no row.
    func firstNullableInteger() throws -> Int64?? {
        try firstRow { sqlite3_column_type(handle, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, 0) }
    }

    /// Calls `body` with each row, then resets the statement (also when `body` throws).
    func forEachRow(_ body: (Columns) throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw failure(code) }
            try body(Columns(handle))
        }
    }

    /// The columns of the row a statement stands on, valid until its next step.
    struct Columns {
        let handle: OpaquePointer

        /// The columns of the row `handle`, a statement of SQLite's, stands on.
        init(_ handle: OpaquePointer) {
            self.handle = handle
        }

        func integer(_ column: Int32) -> Int64 {
            sqlite3_column_int64(handle, column)
        }

        func text(_ column: Int32) -> String {
            String(decoding: bytes(column), as: UTF8.self)
        }

        /// The bytes of a text or blob column, valid until the statement's next step.
        func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let start = sqlite3_column_blob(handle, column) else {
                return UnsafeBufferPointer(start: nil, count: 0)
            }
            return UnsafeBufferPointer(start: start.assumingMemoryBound(to: UInt8.self), count: count)
        }
    }

    /// `read` of the first row, `nil` when there is none.
    private func firstRow<Value>(_ read: () -> Value) throws -> Value? {
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        if code == SQLITE_DONE { return nil }
        guard code == SQLITE_ROW else { throw failure(code) }
        return read()
    }

    private func failure(_ code: Int32) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: connection.map { String(cString: sqlite3_errmsg($0)) },
            sql: sqlite3_sql(handle).map { String(cString: $0) })
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction and commits it; rolls it back when `body` or the commit
    /// throws, so that nothing of it stays.
    static func transaction(_ db: Database, _ body: () throws -> Void) throws {
        try RawStatement(db, "BEGIN IMMEDIATE").run()
        do {
            try body()
            try RawStatement(db, "COMMIT").run()
        } catch {
            // A failed statement may have ended the transaction already (SQLite rolls back on some errors).
            if db.isInsideTransaction { try? RawStatement(db, "ROLLBACK").run() }
            throw error
        }
    }
}
