import NIOCore
import PostgresNIO
import QuireCore
import Synchronization

/// Stored positions of some rows of one list, as of one log position: those of the rows placed by the last
/// commit of the list this store made, at both ends of each run, and of the kept siblings they went between.
///
/// A write built on that position finds there the siblings its new rows go next to when they go where the last
/// ones went (an append goes after the row the last append placed), and needs no read before its commit. The
/// positions hold while the list is at that log position: the commit function checks it, and any other commit of
/// the list moves it.
struct KnownPositions {
    let position: Int64
    var sections: [String: [UInt8]] = [:]
    var items: [String: [UInt8]] = [:]

    /// Lists whose positions are kept, at most (an arbitrary one is forgotten to make room).
    static let listLimit = 10_000
    /// Rows kept for one commit, at most (past that, none: a commit that placed many runs is not an append).
    static let rowLimit = 64
}

/// Where the placed rows of a commit go, and what that was read from.
struct Placements {
    let positions: CommitRequest.Positions
    /// The kept siblings' stored positions.
    let siblings: (sections: [String: [UInt8]], items: [String: [UInt8]])
}

extension PostgresListStore {
    /// The positions of the rows `request` places, between those of the kept siblings: known from the last commit
    /// (``KnownPositions``), or read in one statement.
    ///
    /// - Parameter locked: whether `connection` holds the list locked at the expected version.
    /// - Returns: `nil` when a kept sibling is not stored and `locked` is false (see
    ///   ``store(_:on:locked:committing:)``).
    func placements(of request: CommitRequest, on connection: PostgresConnection, locked: Bool) throws -> Placements? {
        let changes = request.changes
        let sectionSiblings = Set(changes.placedSections.flatMap { [$0.after, $0.before] }.compactMap { $0 })
        let itemSiblings = Set(changes.placedItems.flatMap { [$0.after, $0.before] }.compactMap { $0 })
        var stored: (sections: [String: [UInt8]], items: [String: [UInt8]]) = ([:], [:])
        if !sectionSiblings.isEmpty || !itemSiblings.isEmpty, let expected = request.expected?.position,
            let known = knownPositions.withLock({ $0[request.list] }), known.position == expected
        {
            for id in sectionSiblings { stored.sections[id] = known.sections[id] }
            for id in itemSiblings { stored.items[id] = known.items[id] }
        }
        let unknown = (
            sections: sectionSiblings.filter { stored.sections[$0] == nil },
            items: itemSiblings.filter { stored.items[$0] == nil }
        )
        if !unknown.sections.isEmpty || !unknown.items.isEmpty {
            let statement = SiblingPositions(
                list: request.list, sections: Array(unknown.sections), items: Array(unknown.items))
            for (table, id, position) in try connection.rows(of: statement, logger: logger).wait(within: patience) {
                let bytes = Array(position.readableBytesView)
                guard StoragePosition.isValid(bytes) else {
                    throw PostgresStoreError("list \"\(request.list)\": the stored position of \"\(id)\" is malformed")
                }
                if table == 0 { stored.sections[id] = bytes } else { stored.items[id] = bytes }
            }
        }
        let missing =
            sectionSiblings.first { stored.sections[$0] == nil }.map { ("section", $0) }
            ?? itemSiblings.first { stored.items[$0] == nil }.map { ("item", $0) }
        if let (rows, id) = missing {
            guard locked else { return nil }
            throw PostgresStoreError("the stored rows of list \"\(request.list)\" lack \(rows) \"\(id)\"")
        }
        let positions = CommitRequest.Positions(
            sections: changes.placedSections.map { run in
                StoragePosition.between(
                    run.after.flatMap { stored.sections[$0] }, run.before.flatMap { stored.sections[$0] },
                    count: run.sections.count)
            },
            items: changes.placedItems.map { run in
                StoragePosition.between(
                    run.after.flatMap { stored.items[$0] }, run.before.flatMap { stored.items[$0] },
                    count: run.items.count)
            })
        return Placements(positions: positions, siblings: stored)
    }

    /// Keeps the positions `request`, committed at log position `position`, leaves known (``KnownPositions``).
    func remember(_ placements: Placements, of request: CommitRequest, at position: Int64) {
        var known = KnownPositions(
            position: position, sections: placements.siblings.sections, items: placements.siblings.items)
        for (run, keys) in zip(request.changes.placedSections, placements.positions.sections) {
            for index in [0, run.sections.count - 1] where run.sections.indices.contains(index) {
                known.sections[run.sections[index].id] = keys[index]
            }
        }
        for (run, keys) in zip(request.changes.placedItems, placements.positions.items) {
            for index in [0, run.items.count - 1] where run.items.indices.contains(index) {
                known.items[run.items[index].id] = keys[index]
            }
        }
        let kept = known.sections.count + known.items.count <= KnownPositions.rowLimit ? known : nil
        knownPositions.withLock { lists in
            if kept != nil, lists[request.list] == nil, lists.count >= KnownPositions.listLimit {
                lists.remove(at: lists.startIndex)
            }
            lists[request.list] = kept
        }
    }

    /// Forgets what ``remember(_:of:at:)`` kept of `list`.
    func forgetPositions(of list: String) {
        knownPositions.withLock { _ = $0.removeValue(forKey: list) }
    }
}
