/// URL-safe base64 without padding (RFC 4648 §5): how cursors travel in a query string without escaping.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` as text.
    ///
    /// - Complexity: O(*n*).
    static func encode(_ bytes: [UInt8]) -> String {
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

    /// The bytes `text` encodes; `nil` when it holds another character or has an impossible length.
    ///
    /// - Complexity: O(*n*).
    static func decode(_ text: String) -> [UInt8]? {
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

/// 32-bit FNV-1a, the check both cursors carry (``PageCursor``'s list tag, ``ListCursor``'s): against mix-ups and
/// edits, not a secret (cursors are not signed).
enum CursorCheck {
    static let offsetBasis: UInt32 = 2_166_136_261

    /// `hash` continued over `bytes`.
    static func fnv1a(_ bytes: some Sequence<UInt8>, from hash: UInt32 = offsetBasis) -> UInt32 {
        var hash = hash
        for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return hash
    }
}
