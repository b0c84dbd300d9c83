/// The changes from a session's window to its next one, described by what differs rather than by every
/// item the windows hold: the stretches of the window that nothing touched are counted, never read.
///
/// Built by ``ListVersion/sparseTransition(from:expanded:extend:bound:)`` from the list's change log; written by
/// ``encodeBatch(into:)`` and ``encodeSequential(into:)`` into exactly the bytes that ``WindowChanges``
/// writes for the same two windows (the property tests hold the two to that).
///
/// Each surviving section is a sequence of pieces. On the old side, in old order: items that stay (a run
/// counted, or one touched item), items deleted (read, since the client is told their ids), items that
/// leave to be placed elsewhere. On the new side, in new order: items that stay, items inserted, items
/// moved in. Sections never move here (a section move falls back to the full diff).
public struct SparseChanges: Sendable {
    enum OldPiece: Sendable {
        /// Items kept in place.
        case stays(count: Int)
        /// Items gone from the window (or from their section).
        case deleted([WindowItem])
        /// An item that moves: it holds its place until its move is written.
        case leaves
    }

    enum NewPiece: Sendable {
        /// Items kept in place; `updated` is the new content of one touched item that changed.
        case stays(count: Int, updated: WindowItem?)
        /// Items new to the window (or to their section's slice).
        case inserted([WindowItem])
        /// An item moved here from `section`'s `index` (old coordinates), held by old piece `piece`.
        case moved(WindowItem, section: Int, index: Int, piece: Int, updated: Bool)

        var count: Int {
            switch self {
            case .stays(let count, _): count
            case .inserted(let items): items.count
            case .moved: 1
            }
        }
    }

    /// The old window's sections.
    let oldSections: [SectionNode]
    /// The new window's sections, with the items of the inserted ones.
    let newSections: [SectionNode]
    /// The new window's inserted sections, as written (`nil` for surviving sections).
    let insertedSections: [WindowSection?]
    /// Items of each new section in the window.
    let newLengths: [Int]
    /// Per old section: its new index, or -1 when it leaves the window.
    let oldToNew: [Int]
    /// Per new section: its old index, or -1 when it enters the window.
    let newToOld: [Int]
    /// Per old section, its pieces in old order (empty when it does not survive).
    let oldPieces: [[OldPiece]]
    /// Per new section, its pieces in new order (empty when it is inserted).
    let newPieces: [[NewPiece]]
    /// Items in the new window.
    let newCount: Int

    public let deletedSectionCount: Int
    public let insertedSectionCount: Int
    public let updatedSectionCount: Int
    public let deletedItemCount: Int
    public let insertedItemCount: Int
    public let movedItemCount: Int
    public let updatedItemCount: Int
    /// Items carried by inserted sections.
    let insertedSectionItemCount: Int

    /// Operations in the change, counted as ``WindowChanges/operationCount`` counts them.
    public var operationCount: Int {
        deletedSectionCount + insertedSectionCount + updatedSectionCount + deletedItemCount + insertedItemCount
            + movedItemCount + updatedItemCount + insertedSectionItemCount
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { operationCount == 0 }

    /// As ``WindowChanges/exceeds(share:)``.
    public func exceeds(share: Double) -> Bool {
        Double(operationCount) > share * Double(max(newCount, 1))
    }

    /// Whether the surviving new section `index` changed its header or footer.
    func isUpdated(section index: Int) -> Bool {
        let oldIndex = newToOld[index]
        return oldIndex >= 0 && oldSections[oldIndex].supplementaryHash != newSections[index].supplementaryHash
    }
}

extension SparseChanges {
    /// Appends the `batch` object of openapi.yaml.
    ///
    /// - Complexity: O(*p* + *s* + *b*) for *p* pieces, *s* sections and *b* bytes of written items.
    public func encodeBatch(into out: inout [UInt8]) {
        var first = true
        out.appendLiteral("{\"deleteSections\":[")
        for (oldIndex, newIndex) in oldToNew.enumerated() where newIndex < 0 {
            separator(&first, &out)
            JSONWriter.writeInteger(oldIndex, into: &out)
        }
        out.appendLiteral("],\"insertSections\":[")
        first = true
        for (newIndex, section) in insertedSections.enumerated() {
            guard let section else { continue }
            separator(&first, &out)
            out.appendLiteral("{\"index\":")
            JSONWriter.writeInteger(newIndex, into: &out)
            out.appendLiteral(",\"section\":")
            section.write(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"moveSections\":[],\"deleteItems\":[")
        first = true
        for (oldIndex, pieces) in oldPieces.enumerated() where oldToNew[oldIndex] >= 0 {
            var index = 0
            for piece in pieces {
                switch piece {
                case .stays(let count): index += count
                case .leaves: index += 1
                case .deleted(let items):
                    for _ in items {
                        separator(&first, &out)
                        writePath(oldIndex, index, into: &out)
                        index += 1
                    }
                }
            }
        }
        out.appendLiteral("],\"insertItems\":[")
        first = true
        forEachInsertedItem { section, index, item in
            separator(&first, &out)
            out.appendLiteral("{\"at\":")
            writePath(section, index, into: &out)
            out.appendLiteral(",\"item\":")
            WindowItem.write(at: item, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"moveItems\":[")
        first = true
        forEachMovedItem { fromSection, fromIndex, section, index in
            separator(&first, &out)
            out.appendLiteral("{\"from\":")
            writePath(fromSection, fromIndex, into: &out)
            out.appendLiteral(",\"to\":")
            writePath(section, index, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"counts\":[")
        for (index, length) in newLengths.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeInteger(length, into: &out)
        }
        out.appendLiteral("],\"updateItems\":[")
        first = true
        forEachUpdatedItem { section, index, item in
            separator(&first, &out)
            out.appendLiteral("{\"at\":")
            writePath(section, index, into: &out)
            out.appendLiteral(",\"item\":")
            item.write(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("],\"updateSections\":[")
        first = true
        for newIndex in newSections.indices where isUpdated(section: newIndex) {
            separator(&first, &out)
            out.appendLiteral("{\"index\":")
            JSONWriter.writeInteger(newIndex, into: &out)
            newSections[newIndex].writeSupplementaries(into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.appendLiteral("]}")
    }

    /// Calls `body` with every item inserted into a surviving new section: its section, its index there and
    /// the item, read in place (a copy would retain its node, its parent and its bytes: a page of inserted
    /// items made that a tenth of writing them).
    func forEachInsertedItem(_ body: (_ section: Int, _ index: Int, _ item: UnsafePointer<WindowItem>) -> Void) {
        for (section, pieces) in newPieces.enumerated() where newToOld[section] >= 0 {
            var index = 0
            for piece in pieces {
                if case .inserted(let items) = piece {
                    items.withUnsafeBufferPointer { items in
                        for offset in items.indices { body(section, index + offset, items.baseAddress! + offset) }
                    }
                }
                index += piece.count
            }
        }
    }

    /// Calls `body` with every item moved into a surviving new section: where it was (old coordinates) and
    /// where it is.
    func forEachMovedItem(_ body: (_ fromSection: Int, _ fromIndex: Int, _ section: Int, _ index: Int) -> Void) {
        for (section, pieces) in newPieces.enumerated() where newToOld[section] >= 0 {
            var index = 0
            for piece in pieces {
                if case .moved(_, let fromSection, let fromIndex, _, _) = piece {
                    body(fromSection, fromIndex, section, index)
                }
                index += piece.count
            }
        }
    }

    /// Calls `body` with every item whose content changed, at its new place, in new order.
    func forEachUpdatedItem(_ body: (_ section: Int, _ index: Int, _ item: WindowItem) -> Void) {
        for (section, pieces) in newPieces.enumerated() where newToOld[section] >= 0 {
            var index = 0
            for piece in pieces {
                switch piece {
                case .stays(_, let updated?): body(section, index, updated)
                case .moved(let item, _, _, _, true): body(section, index, item)
                default: break
                }
                index += piece.count
            }
        }
    }
}

extension SparseChanges: ChangeEncoding {}
