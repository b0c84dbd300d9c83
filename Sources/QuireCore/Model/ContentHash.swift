/// A 64-bit hash of encoded bytes (FNV-1a, then a final mix), stable across processes.
enum ContentHash {
    /// - Complexity: O(*n*).
    static func of(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return mix(hash)
    }

    /// Combines two hashes into one.
    static func combine(_ first: UInt64, _ second: UInt64) -> UInt64 {
        mix(first &* 0x9E37_79B9_7F4A_7C15 ^ second)
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var hash = value
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        return hash
    }
}
