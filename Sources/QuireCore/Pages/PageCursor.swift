/// An opaque cursor of a stateless page (API.md §3): where the next (or previous) page starts.
///
/// It carries the visible position of the page's edge and the ids of the edge item and of up to three
/// items further inside the page, so that it still works after the edge item was deleted: the first of
/// those ids that still exists anchors the page; when none does, the position does. Encoded as
/// URL-safe base64 of a small length-prefixed record, so it needs no escaping in a query string.
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

    public init(direction: Direction, position: Int, anchors: [String]) {
        self.direction = direction
        self.position = position
        self.anchors = anchors
    }

    /// How many ids a cursor carries at most.
    public static let maxAnchors = 4

    /// The cursor to the page after `window` (nil when the window is empty).
    public static func next(after window: Window) -> PageCursor? {
        let ids = window.itemIDs
        guard let last = ids.indices.last else { return nil }
        return PageCursor(
            direction: .after, position: window.start + last, anchors: Array(ids.reversed().prefix(maxAnchors)))
    }

    /// The cursor to the page before `window` (nil when the window is empty).
    public static func previous(before window: Window) -> PageCursor? {
        let ids = window.itemIDs
        guard !ids.isEmpty else { return nil }
        return PageCursor(direction: .before, position: window.start, anchors: Array(ids.prefix(maxAnchors)))
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

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let formatVersion: UInt8 = 1

    /// The cursor as text for a query string.
    public var encoded: String {
        var bytes: [UInt8] = [Self.formatVersion, direction.rawValue]
        Self.appendVarint(UInt64(position), to: &bytes)
        bytes.append(UInt8(anchors.count))
        for id in anchors {
            let utf8 = Array(id.utf8)
            Self.appendVarint(UInt64(utf8.count), to: &bytes)
            bytes += utf8
        }
        return Self.base64URL(bytes)
    }

    /// Decodes a cursor made by ``encoded``; `nil` for anything else.
    public init?(encoded text: String) {
        guard text.utf8.count <= 2048, var bytes = Self.decodeBase64URL(text)?[...],
            bytes.popFirst() == Self.formatVersion, let rawDirection = bytes.popFirst(),
            let direction = Direction(rawValue: rawDirection), let position = Self.readVarint(&bytes),
            position <= UInt64(Int32.max), let count = bytes.popFirst(), count >= 1, count <= Self.maxAnchors
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
        self.init(direction: direction, position: Int(position), anchors: anchors)
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

    private static func base64URL(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for byte in chunk { value = value << 8 | Int(byte) }
            value <<= 8 * (3 - chunk.count)
            for position in 0...chunk.count {
                out.append(alphabet[(value >> (18 - 6 * position)) & 0x3F])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func decodeBase64URL(_ text: String) -> [UInt8]? {
        var values: [Int] = []
        for byte in text.utf8 {
            guard let value = alphabet.firstIndex(of: byte) else { return nil }
            values.append(value)
        }
        guard values.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            var value = 0
            for sextet in chunk { value = value << 6 | sextet }
            value <<= 6 * (4 - chunk.count)
            for position in 0..<(chunk.count - 1) {
                bytes.append(UInt8((value >> (16 - 8 * position)) & 0xFF))
            }
            index += 4
        }
        return bytes
    }
}
