/// An opaque cursor of a stateless page (openapi.yaml): where the next (or previous) page starts.
///
/// It carries the visible position of the page's edge and the ids of the edge item and of up to three
/// items further inside the page, so that it still works after the edge item was deleted: the first of
/// those ids that still exists anchors the page; when none does, the position does. Encoded as
/// URL-safe base64 of a small length-prefixed record, so it needs no escaping in a query string. It names
/// the list it was made for by a 32-bit hash of its name, so that a cursor of another list is refused
/// (`400 invalid-cursor`) rather than paging that list from a position that means nothing there.
public struct PageCursor: Sendable, Equatable {
    /// The direction the cursor pages in.
    public enum Direction: UInt8, Sendable {
        /// Items after the anchor (`after=`).
        case after = 1
        /// Items before the anchor (`before=`).
        case before = 2
    }

    public let direction: Direction
    /// The visible position of the edge item when the cursor was made.
    public let position: Int
    /// The edge item's id first, then ids further inside the page.
    public let anchors: [String]
    /// The hash of the name of the list the cursor was made for (``listTag(of:)``).
    public let listTag: UInt32

    public init(direction: Direction, position: Int, anchors: [String], list: String) {
        self.init(direction: direction, position: position, anchors: anchors, listTag: Self.listTag(of: list))
    }

    private init(direction: Direction, position: Int, anchors: [String], listTag: UInt32) {
        self.direction = direction
        self.position = position
        self.anchors = anchors
        self.listTag = listTag
    }

    /// Whether this cursor was made for the list named `list` (a hash: another list's cursor is refused but
    /// for a chance of one in four billion).
    public func isIssued(for list: String) -> Bool {
        listTag == Self.listTag(of: list)
    }

    /// 32-bit FNV-1a of the list's name: a check against mix-ups, not a secret (cursors are not signed).
    static func listTag(of list: String) -> UInt32 {
        CursorCheck.fnv1a(list.utf8)
    }

    /// How many ids a cursor carries at most.
    public static let maxAnchors = 4

    /// The cursor to the page after `window` (nil when the window is empty).
    public static func next(after window: Window, list: String) -> PageCursor? {
        let ids = window.itemIDs
        guard let last = ids.indices.last else { return nil }
        return PageCursor(
            direction: .after, position: window.start + last, anchors: Array(ids.reversed().prefix(maxAnchors)),
            list: list)
    }

    /// The cursor to the page before `window` (nil when the window is empty).
    public static func previous(before window: Window, list: String) -> PageCursor? {
        let ids = window.itemIDs
        guard !ids.isEmpty else { return nil }
        return PageCursor(
            direction: .before, position: window.start, anchors: Array(ids.prefix(maxAnchors)), list: list)
    }

    /// The page of `limit` items this cursor points at in `version` (children not expanded).
    ///
    /// - Complexity: O(*a* log *n* + *s* + *k*) for *a* anchors.
    public func page(in version: ListVersion, limit: Int) -> Window {
        for id in anchors {
            let page: Window?
            switch direction {
            case .after: page = version.page(after: id, limit: limit)
            case .before: page = version.page(before: id, limit: limit)
            }
            if let page { return page }
        }
        switch direction {
        case .after:
            return version.window(range: (position + 1)..<(position + 1 + limit))
        case .before:
            return version.window(range: max(0, position - limit)..<position)
        }
    }

    // MARK: Encoding

    /// 2: with the list's tag (cursors of format 1, without it, are refused).
    private static let formatVersion: UInt8 = 2

    /// The cursor as text for a query string.
    public var encoded: String {
        var bytes: [UInt8] = [Self.formatVersion, direction.rawValue]
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: listTag >> shift)) }
        Self.appendVarint(UInt64(position), to: &bytes)
        bytes.append(UInt8(anchors.count))
        for id in anchors {
            let utf8 = Array(id.utf8)
            Self.appendVarint(UInt64(utf8.count), to: &bytes)
            bytes += utf8
        }
        return Base64URL.encode(bytes)
    }

    /// Decodes a cursor made by ``encoded``; `nil` for anything else.
    public init?(encoded text: String) {
        guard text.utf8.count <= 2048, var bytes = Base64URL.decode(text)?[...],
            bytes.popFirst() == Self.formatVersion, let rawDirection = bytes.popFirst(),
            let direction = Direction(rawValue: rawDirection), bytes.count >= 4
        else { return nil }
        let listTag = bytes.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        bytes.removeFirst(4)
        guard let position = Self.readVarint(&bytes), position <= UInt64(Int32.max), let count = bytes.popFirst(),
            count >= 1, count <= Self.maxAnchors
        else { return nil }
        var anchors: [String] = []
        for _ in 0..<count {
            guard let length = Self.readVarint(&bytes), length <= 1024, bytes.count >= Int(length) else { return nil }
            let utf8 = bytes.prefix(Int(length))
            bytes.removeFirst(Int(length))
            guard let id = String(validating: utf8, as: UTF8.self), !id.isEmpty else { return nil }
            anchors.append(id)
        }
        guard bytes.isEmpty else { return nil }
        self.init(direction: direction, position: Int(position), anchors: anchors, listTag: listTag)
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private static func readVarint(_ bytes: inout ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while let byte = bytes.popFirst() {
            guard shift < 63 else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }
}
