/// Session ids: 128 bits from the system's cryptographic random source (`getrandom`), as 22 URL-safe
/// base64 characters. Unguessable, so a session id is its own capability.
///
/// An instance of a cluster names itself in its ids: `<instance>_<22 characters>`, where the instance tag
/// is 1 to 16 letters and digits (`cluster.instance`), so that a load balancer sends every request of a
/// session to the instance that holds it (deploy/nginx/quire-cluster.conf).
public enum SessionID {
    /// The longest instance tag.
    public static let maximumInstanceLength = 16

    /// Whether `tag` can name an instance in session ids: 1 to 16 ASCII letters and digits.
    public static func isValidInstance(_ tag: String) -> Bool {
        !tag.isEmpty && tag.utf8.count <= maximumInstanceLength
            && tag.utf8.allSatisfy { alphabetValue[Int($0)] < 62 }  // letters and digits: not `-` (62) or `_` (63)
    }

    /// A new random id, tagged with `instance` when given.
    ///
    /// - Precondition: `instance` is valid (``isValidInstance(_:)``).
    public static func generate(instance: String?) -> String {
        guard let instance else { return generate() }
        precondition(isValidInstance(instance), "an instance tag is 1 to 16 letters and digits")
        return instance + "_" + generate()
    }

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

    /// Whether `text` has the shape of a session id, tagged or not (so obviously wrong ids are refused
    /// cheaply).
    ///
    /// - Complexity: O(1): at most 40 bytes are looked at.
    public static func isWellFormed(_ text: String) -> Bool {
        let bytes = text.utf8
        guard bytes.count == 22 || (bytes.count >= 24 && bytes.count <= 23 + maximumInstanceLength) else {
            return false
        }
        // The table is read once, not per byte (a static's every read goes through its once-check), and the
        // bytes as a buffer: this runs on every request that names a session.
        let (table, absent) = (alphabetValue, notInAlphabet)
        let allInAlphabet =
            bytes.withContiguousStorageIfAvailable { buffer in buffer.allSatisfy { table[Int($0)] != absent } }
            ?? bytes.allSatisfy { table[Int($0)] != absent }
        guard allInAlphabet else { return false }
        if bytes.count == 22 { return true }
        // `<tag>_<22>`: the tag is letters and digits only, so the first `_` or `-` must end it.
        let tagLength = bytes.count - 23
        guard let end = bytes.firstIndex(where: { $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }) else {
            return false
        }
        return bytes.distance(from: bytes.startIndex, to: end) == tagLength && bytes[end] == UInt8(ascii: "_")
    }

    /// Six of a session id's random bits, from its next to last character (the last one carries only two), for
    /// spreading ids without hashing them: random, so as even as a hash. Any text gives some value (a text that
    /// is not an id then is not found where it points).
    ///
    /// - Complexity: O(1).
    public static func randomBits(_ id: String) -> Int {
        let bytes = id.utf8
        guard bytes.count >= 2 else { return 0 }
        return Int(alphabetValue[Int(bytes[bytes.index(bytes.endIndex, offsetBy: -2)])] & 0x3F)
    }

    /// Each byte's value in the alphabet (0 to 63), or ``notInAlphabet``: the one table for checking ids and
    /// for reading their random bits.
    private static let alphabetValue: [UInt8] = {
        var values = [UInt8](repeating: notInAlphabet, count: 256)
        for (value, byte) in alphabet.enumerated() { values[Int(byte)] = UInt8(value) }
        return values
    }()
    private static let notInAlphabet: UInt8 = 0xFF
}
