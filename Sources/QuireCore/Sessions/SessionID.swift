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
        withBytes(of: text, isWellFormed)
    }

    /// `body` of `text`'s UTF-8 bytes as a buffer: in place for a native or small string (always, on Linux), a
    /// copy for a bridged one.
    static func withBytes<Result>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        text.utf8.withContiguousStorageIfAvailable(body) ?? Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// Whether `bytes` have the shape of a session id (see ``isWellFormed(_:)-(String)``).
    static func isWellFormed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == 22 || (bytes.count >= 24 && bytes.count <= 23 + maximumInstanceLength) else {
            return false
        }
        // The table is read once, not per byte (a static's every read goes through its once-check), and through
        // a pointer (an array's subscript checks its bounds, and `allSatisfy` calls a closure per byte): this runs
        // on every request that names a session.
        let allInAlphabet = alphabetValue.withUnsafeBufferPointer { table in
            for byte in bytes where table[Int(byte)] == notInAlphabet { return false }
            return true
        }
        guard allInAlphabet else { return false }
        if bytes.count == 22 { return true }
        // `<tag>_<22>`: the tag is letters and digits only, so the first `_` or `-` must end it.
        let tagLength = bytes.count - 23
        guard let end = bytes.firstIndex(where: { $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }) else {
            return false
        }
        return end == tagLength && bytes[end] == UInt8(ascii: "_")
    }

    /// 60 of a session id's random bits: the 10 characters before the last (which carries only two), 6 bits
    /// each, for hashing and spreading ids without reading them whole: random, so as even as a hash. Any text
    /// gives some value (a text that is not an id then is not found where it points).
    ///
    /// - Complexity: O(1): at most 10 bytes are read.
    public static func randomBits(_ id: String) -> UInt64 {
        withBytes(of: id, randomBits)
    }

    /// ``randomBits(_:)-(String)`` of an id's bytes.
    static func randomBits(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        alphabetValue.withUnsafeBufferPointer { table in
            var bits: UInt64 = 0
            let end = bytes.count - 1
            var index = max(0, end - 10)
            while index < end {
                bits = bits << 6 | UInt64(table[Int(bytes[index])] & 0x3F)
                index += 1
            }
            return bits
        }
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

/// A session id as the key of a table: hashed by its random bits (``SessionID/randomBits(_:)``) and compared by
/// them before its bytes.
///
/// A `String` key would be hashed whole (SipHash over its 22 bytes) on every lookup, and Swift's dictionaries,
/// which keep no hashes, compare the key with each occupied bucket they probe: a session request makes two such
/// lookups. Hashing 60 random bits is safe against colliding keys: the tables' keys are ids this service
/// generated, and the seeded `Hasher` still mixes the bits.
public struct SessionKey: Hashable, Sendable {
    public let id: String
    /// ``SessionID/randomBits(_:)`` of `id`.
    public let bits: UInt64

    public init(_ id: String) {
        self.id = id
        bits = SessionID.randomBits(id)
    }

    /// The key of `id` when it has the shape of a session id (``SessionID/isWellFormed(_:)-(String)``), else
    /// `nil`: checked and read in one pass over its bytes, on every request that names a session.
    public init?(validating id: String) {
        let bits = SessionID.withBytes(of: id) { bytes in
            SessionID.isWellFormed(bytes) ? SessionID.randomBits(bytes) : nil
        }
        guard let bits else { return nil }
        (self.id, self.bits) = (id, bits)
    }

    public static func == (lhs: SessionKey, rhs: SessionKey) -> Bool {
        lhs.bits == rhs.bits && lhs.id == rhs.id
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bits)
    }
}
