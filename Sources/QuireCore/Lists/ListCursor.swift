/// An opaque cursor of the list index (`GET /v1/lists`, openapi.yaml): the name of the last list of a page. The
/// next page holds the lists whose names come after it, so that lists created or deleted between two pages
/// never make a page skip or repeat a list that exists throughout.
///
/// Encoded as URL-safe base64 of a small record: a format byte (`L`: no page cursor starts with it), a 32-bit
/// check (FNV-1a of the request's `prefix` and of the name), then the name's UTF-8. The check refuses a
/// cursor used with another `prefix` than the page it came from, and one edited by hand, but for a chance of
/// one in four billion. It is no secret (cursors are not signed) and needs none: a cursor only says where a
/// page starts, and the caller's scopes decide which lists the page holds.
public struct ListCursor: Sendable, Equatable {
    /// The name the next page starts after.
    public let after: String
    /// The `prefix` of the request whose page the cursor follows (`""` for none).
    public let prefix: String

    public init(after: String, prefix: String) {
        self.after = after
        self.prefix = prefix
    }

    /// The longest name a cursor carries (list names are at most 128 bytes).
    static let maximumNameBytes = 1024
    private static let format = UInt8(ascii: "L")

    /// The cursor as text for a query string.
    public var encoded: String {
        var bytes: [UInt8] = [Self.format]
        let check = Self.check(prefix: prefix, name: after)
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: check >> shift)) }
        bytes += after.utf8
        return Base64URL.encode(bytes)
    }

    /// Decodes a cursor made by ``encoded`` for a request with `prefix`; `nil` for anything else: malformed,
    /// edited, or made for another prefix.
    ///
    /// - Complexity: O(*n*) in the length of `text`.
    public init?(encoded text: String, prefix: String) {
        guard text.utf8.count <= 2 * Self.maximumNameBytes, let bytes = Base64URL.decode(text), bytes.count > 5,
            bytes.count - 5 <= Self.maximumNameBytes, bytes[0] == Self.format,
            let name = String(validating: bytes[5...], as: UTF8.self)
        else { return nil }
        let check = bytes[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard check == Self.check(prefix: prefix, name: name) else { return nil }
        self.init(after: name, prefix: prefix)
    }

    /// 32-bit FNV-1a of the prefix, a separator no name holds (0xFF is no byte of UTF-8), and the name.
    private static func check(prefix: String, name: String) -> UInt32 {
        CursorCheck.fnv1a(
            name.utf8, from: CursorCheck.fnv1a(CollectionOfOne(0xFF), from: CursorCheck.fnv1a(prefix.utf8)))
    }
}
