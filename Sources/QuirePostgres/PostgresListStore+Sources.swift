import NIOCore
import PostgresNIO
public import QuireCore

extension PostgresListStore {
    /// `true`: a source's progress is written in the transaction of its lists' commits, so that whichever instance
    /// follows the source after this one goes on from it.
    public var keepsSources: Bool { true }

    /// Stores `commits` and `progress` in one transaction: each list locked in name order and checked at the version
    /// and log position its commit was built on (``ListCommit/position``), its rows and its log entry written by the
    /// commit function as any commit's, then the source's position and rows, then `COMMIT`; the other instances are
    /// told of each list once it is committed.
    ///
    /// - Returns: the log position of each list's last commit.
    /// - Throws: ``StoreConflict`` when a list is not at the version its commit was built on (another instance followed
    ///   the source and wrote it since this one held it); `StoreOutcomeUnknown` when the connection failed while
    ///   committing; ``PostgresStoreError`` otherwise. Nothing is stored then.
    public func commit(together commits: [ListCommit], progress: SourceProgress) throws -> [String: Int64] {
        let connection = try connections.acquire()
        var committing = false
        var logged: [String: Int64] = [:]
        // The list being locked or written, which a conflict names.
        var current = commits.first?.list ?? ""
        do {
            _ = try connection.query("BEGIN", logger: logger).wait(within: patience)
            var firsts: [String: ListCommit] = [:]
            for commit in commits where firsts[commit.list] == nil { firsts[commit.list] = commit }
            for (list, commit) in firsts.sorted(by: { $0.key < $1.key }) {
                current = list
                try lockList(
                    list, expecting: commit.previous.map { ($0.version, commit.position) }, beginning: false,
                    on: connection)
            }
            // A list written twice in the batch: the second builds on the first, at the position the first logged.
            var versions: [String: UInt64] = [:]
            for commit in commits {
                current = commit.list
                guard let write = commit.write else {
                    throw PostgresStoreError("a write that is not a ListWrite cannot be replayed by other instances")
                }
                let expected: (version: UInt64, position: Int64)? =
                    if let position = logged[commit.list], let version = versions[commit.list] {
                        (version, position)
                    } else {
                        commit.previous.map { ($0.version, commit.position) }
                    }
                let (kind, body) = write.logged
                let request = CommitRequest(
                    list: commit.list, expected: expected, version: commit.next.version, kind: kind, body: body,
                    sizes: (commit.next.sectionCount, commit.next.itemCount),
                    changes: commit.changes
                        ?? commit.next.storageChanges(since: commit.previous, keepsLabels: write.keepsLabels))
                guard let position = try store(request, on: connection, locked: true, committing: &committing) else {
                    throw VersionMismatch()
                }
                logged[commit.list] = position
                versions[commit.list] = commit.next.version
            }
            try record(progress, on: connection)
            committing = true
            _ = try connection.query("COMMIT", logger: logger).wait(within: patience)
        } catch {
            for commit in commits { forgetPositions(of: commit.list) }
            connections.discard(connection, after: error, reusable: false)
            throw sourceFailure(error, committing: committing, list: current)
        }
        connections.release(connection)
        for (list, position) in logged { notifier.announce(list, position: position) }
        return logged
    }

    /// What ``commit(together:progress:)`` throws for `error`.
    private func sourceFailure(_ error: any Error, committing: Bool, list: String) -> any Error {
        let state = PostgresConnections.sqlState(of: error)
        if error is VersionMismatch || state == "40P01" || state == "40001" || state == "23505" {
            return StoreConflict(list: list)
        }
        if committing && state == nil {
            return StoreOutcomeUnknown(
                "committing a source's transaction: \(PostgresConnections.describe(error)); the commit may have been made"
            )
        }
        if let error = error as? PostgresStoreError { return error }
        return PostgresStoreError("writing a source's lists: \(PostgresConnections.describe(error))")
    }

    /// Writes `progress` in the transaction open on `connection`: the rows' places (the last of a row's places
    /// stands), the rows gone, and the position (kept when `progress` has none). Four statements sent at once.
    private func record(_ progress: SourceProgress, on connection: PostgresConnection) throws {
        var places: [String: String] = [:]
        var removed = Set<String>()
        for row in progress.rows {
            if let place = row.place {
                places[row.id] = place
                removed.remove(row.id)
            } else {
                places[row.id] = nil
                removed.insert(row.id)
            }
        }
        let source = progress.source
        var queries: [PostgresQuery] = []
        if progress.replacesRows {
            queries.append("DELETE FROM quire_source_row WHERE source = \(source)")
            queries.append("DELETE FROM quire_source WHERE name = \(source)")
        }
        if !places.isEmpty {
            let ids = Array(places.keys)
            let texts = ids.map { places[$0]! }
            queries.append(
                """
                INSERT INTO quire_source_row (source, id, place)
                SELECT \(source), u.id, u.place FROM unnest(\(ids)::text[], \(texts)::text[]) AS u (id, place)
                ON CONFLICT (source, id) DO UPDATE SET place = excluded.place
                """)
        }
        if !removed.isEmpty {
            queries.append(
                "DELETE FROM quire_source_row WHERE source = \(source) AND id = ANY (\(Array(removed))::text[])")
        }
        let position = progress.position.map { Int64(bitPattern: $0) }
        queries.append(
            """
            INSERT INTO quire_source (name, position) VALUES (\(source), \(position))
            ON CONFLICT (name) DO UPDATE SET position = coalesce(excluded.position, quire_source.position)
            """)
        // Sent without waiting for each answer (the connection runs them in order), and waited for in that order.
        let answers = queries.map { connection.query($0, logger: logger) }
        for answer in answers { _ = try answer.wait(within: patience) }
    }

    /// What the store holds of `source`.
    ///
    /// - Throws: ``PostgresStoreError`` when the database cannot be read.
    /// - Complexity: O(*r*) in the source's rows.
    public func sourceState(of source: String) throws -> SourceState {
        do {
            return try connections.with { connection in
                var state = SourceState()
                state.position = try position(of: source, on: connection)
                let rows = try connection.query(
                    "SELECT id, place FROM quire_source_row WHERE source = \(source)", logger: logger
                ).wait(within: patience)
                state.rows.reserveCapacity(rows.count)
                for row in rows {
                    let (id, place) = try row.decode((String, String).self)
                    state.rows[id] = place
                }
                return state
            }
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw PostgresStoreError("reading source \(source): \(PostgresConnections.describe(error))")
        }
    }

    /// The position of `source`, without its rows.
    ///
    /// - Throws: ``PostgresStoreError`` when the database cannot be read.
    public func sourcePosition(of source: String) throws -> UInt64? {
        do {
            return try connections.with { try position(of: source, on: $0) }
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw PostgresStoreError("reading source \(source): \(PostgresConnections.describe(error))")
        }
    }

    /// The position recorded of `source` (`nil`: no row, or no copy finished), read on `connection`.
    private func position(of source: String, on connection: PostgresConnection) throws -> UInt64? {
        let position = try connection.query(
            "SELECT position FROM quire_source WHERE name = \(source)", logger: logger
        ).wait(within: patience).first?.decode(Int64?.self)
        return position.flatMap { $0 }.map { UInt64(bitPattern: $0) }
    }

    /// Forgets `source`'s position and rows.
    ///
    /// - Throws: ``PostgresStoreError``.
    public func forgetSource(_ source: String) throws {
        do {
            try connections.with { connection in
                _ = try connection.query("BEGIN", logger: logger).wait(within: patience)
                _ = try connection.query("DELETE FROM quire_source_row WHERE source = \(source)", logger: logger)
                    .wait(within: patience)
                _ = try connection.query("DELETE FROM quire_source WHERE name = \(source)", logger: logger)
                    .wait(within: patience)
                _ = try connection.query("COMMIT", logger: logger).wait(within: patience)
            }
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw PostgresStoreError("forgetting source \(source): \(PostgresConnections.describe(error))")
        }
    }
}
