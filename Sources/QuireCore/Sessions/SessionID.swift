/// Session ids: 128 bits from the system's cryptographic random source (`getrandom`), as 22 URL-safe
/// base64 characters. Unguessable, so a session id is its own capability.
public enum SessionID {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// A new random id.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        var bytes: [UInt8] = []
        bytes.reserveCapacity(22)
        // 128 bits, 6 at a time: 21 full characters and one of the last 2 bits.
        for index in 0..<22 {
            let bit = index * 6
            var value: UInt64
            if bit + 6 <= 64 {
                value = high >> UInt64(58 - bit)
            } else if bit < 64 {
                value = (high << UInt64(bit - 58)) | (low >> UInt64(122 - bit))
            } else if bit + 6 <= 128 {
                value = low >> UInt64(122 - bit)
            } else {
                value = low << UInt64(bit - 122)
            }
            bytes.append(alphabet[Int(value & 0x3F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `text` has the shape of a session id (so obviously wrong ids are refused cheaply).
    ///
    /// - Complexity: O(1): at most 23 bytes are looked at.
    public static func isWellFormed(_ text: String) -> Bool {
        var count = 0
        for byte in text.utf8 {
            guard count < 22, isAlphabetByte[Int(byte)] else { return false }
            count += 1
        }
        return count == 22
    }

    private static let isAlphabetByte: [Bool] = (0..<256).map { alphabet.contains(UInt8($0)) }
}
