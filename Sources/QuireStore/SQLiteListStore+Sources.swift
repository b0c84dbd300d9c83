import GRDB
public import QuireCore

extension SQLiteListStore {
    /// `true`: a source's progress is written in the transaction of its lists' commits.
    public var keepsSources: Bool { true }

    /// Stores `commits` as ``commit(together:)`` does and `progress` in the same transaction (one sync of the file):
    /// a source's versions and its position in its database's log are durable together.
    ///
    /// - Returns: no positions: the file keeps no log of writes.
    /// - Throws: ``StoreError``; nothing is stored then.
    public func commit(together commits: [ListCommit], progress: SourceProgress) throws -> [String: Int64] {
        var works = listWorks(commits)
        works.append { @Sendable db in try Self.record(progress, in: db) }
        do {
            try group.together(works)
        } catch {
            throw failedWrite(error)
        }
        if !answersAtOnce { applyJournalIfDue() }
        return [:]
    }

    /// What the file holds of `source`.
    ///
    /// Through SQLite's C interface, into a dictionary grown once to the rows' count: what a restart of a source of a
    /// million rows waits for (GRDB's rows cursor and the dictionary's growth took most of a second of it).
    ///
    /// - Throws: ``StoreError`` when the file cannot be read.
    /// - Complexity: O(*r*) in the source's rows.
    public func sourceState(of source: String) throws -> SourceState {
        do {
            return try database.read { db in
                var state = SourceState()
                state.position = try Self.position(of: source, in: db)
                let count = try RawStatement(db, "SELECT count(*) FROM source_row WHERE source = ?")
                count.bind(1, source)
                state.rows.reserveCapacity(Int(try count.firstInteger() ?? 0))
                let rows = try RawStatement(db, "SELECT id, place FROM source_row WHERE source = ?")
                rows.bind(1, source)
                try rows.forEachRow { row in state.rows[row.text(0)] = row.text(1) }
                return state
            }
        } catch {
            throw StoreError.load(path, error)
        }
    }

    /// The position of `source`, without its rows.
    ///
    /// - Throws: ``StoreError`` when the file cannot be read.
    public func sourcePosition(of source: String) throws -> UInt64? {
        do {
            return try database.read { try Self.position(of: source, in: $0) }
        } catch {
            throw StoreError.load(path, error)
        }
    }

    /// The position recorded of `source` (`nil`: no row, or no copy finished).
    private static func position(of source: String, in db: Database) throws -> UInt64? {
        let position = try RawStatement(db, "SELECT position FROM source WHERE name = ?")
        position.bind(1, source)
        return try position.firstNullableInteger().flatMap { $0 }.map { UInt64(bitPattern: $0) }
    }

    /// Forgets `source`'s position and rows.
    ///
    /// - Throws: ``StoreError``.
    public func forgetSource(_ source: String) throws {
        do {
            try database.write { db in
                try db.execute(sql: "DELETE FROM source_row WHERE source = ?", arguments: [source])
                try db.execute(sql: "DELETE FROM source WHERE name = ?", arguments: [source])
            }
        } catch {
            throw StoreError.write(path, error)
        }
    }

    /// Writes `progress` in the open transaction.
    private static func record(_ progress: SourceProgress, in db: Database) throws {
        if progress.replacesRows {
            let forget = try RawStatement(db, "DELETE FROM source_row WHERE source = ?")
            forget.bind(1, progress.source)
            try forget.run()
            let reset = try RawStatement(db, "DELETE FROM source WHERE name = ?")
            reset.bind(1, progress.source)
            try reset.run()
        }
        let place = try RawStatement(db, "INSERT OR REPLACE INTO source_row (source, id, place) VALUES (?, ?, ?)")
        let remove = try RawStatement(db, "DELETE FROM source_row WHERE source = ? AND id = ?")
        for row in progress.rows {
            if let text = row.place {
                place.bind(1, progress.source)
                place.bind(2, row.id)
                place.bind(3, text)
                try place.run()
            } else {
                remove.bind(1, progress.source)
                remove.bind(2, row.id)
                try remove.run()
            }
        }
        let position = try RawStatement(
            db,
            """
            INSERT INTO source (name, position) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET position = coalesce(excluded.position, position)
            """)
        position.bind(1, progress.source)
        if let applied = progress.position {
            position.bind(2, Int64(bitPattern: applied))
        } else {
            position.bind(2, blob: nil)
        }
        try position.run()
    }
}
