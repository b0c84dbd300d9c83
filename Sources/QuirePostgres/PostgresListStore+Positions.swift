import NIOCore
import PostgresNIO
import QuireCore

/// Where the placed rows of a commit go, and what that was read from.
struct Placements {
    let positions: CommitRequest.Positions
    /// The kept siblings' stored positions.
    let siblings: (sections: [String: [UInt8]], items: [String: [UInt8]])
}

extension PostgresListStore {
    /// The positions of the rows `request` places, between those of the kept siblings (read in one statement).
    ///
    /// - Parameter locked: whether `connection` holds the list locked at the expected version.
    /// - Returns: `nil` when a kept sibling is not stored and `locked` is false (see
    ///   ``store(_:on:locked:committing:)``).
    func placements(of request: CommitRequest, on connection: PostgresConnection, locked: Bool) throws -> Placements? {
        let changes = request.changes
        let sectionSiblings = Set(changes.placedSections.flatMap { [$0.after, $0.before] }.compactMap { $0 })
        let itemSiblings = Set(changes.placedItems.flatMap { [$0.after, $0.before] }.compactMap { $0 })
        var stored: (sections: [String: [UInt8]], items: [String: [UInt8]]) = ([:], [:])
        if !sectionSiblings.isEmpty || !itemSiblings.isEmpty {
            let statement = SiblingPositions(
                list: request.list, sections: Array(sectionSiblings), items: Array(itemSiblings))
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
}
