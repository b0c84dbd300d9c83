/// Byte comparisons and the case-insensitive search behind `eq`, `in`, `lt`…`gte` and `contains`.
enum TextSearch {
    /// `lhs` against `rhs` by their bytes: negative, zero or positive as `lhs` sorts before, with or after (a
    /// prefix sorts first).
    @inline(__always)
    static func compare(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        for index in 0..<min(lhs.count, rhs.count) where lhs[index] != rhs[index] {
            return lhs[index] < rhs[index] ? -1 : 1
        }
        return lhs.count - rhs.count
    }

    /// Whether `bytes` are the UTF-8 of `text`: lengths first, then bytes, reading a native string in place.
    @inline(__always)
    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ text: String) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == bytes.count else { return false }
        var index = 0
        for byte in utf8 {
            if bytes[index] != byte { return false }
            index += 1
        }
        return true
    }

    /// `bytes` against the UTF-8 of `text`: negative, zero or positive as `bytes` sort before, with or after.
    static func compare(_ bytes: UnsafeBufferPointer<UInt8>, _ text: String) -> Int {
        var index = 0
        for byte in text.utf8 {
            guard index < bytes.count else { return -1 }
            if bytes[index] != byte { return bytes[index] < byte ? -1 : 1 }
            index += 1
        }
        return index < bytes.count ? 1 : 0
    }

    /// `lhs` against the bytes of `rhs`.
    @inline(__always)
    static func compare(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: [UInt8]) -> Int {
        rhs.withUnsafeBufferPointer { compare(lhs, $0) }
    }

    /// Whether `text`, case-folded, contains `needle`, which is already folded.
    ///
    /// ASCII text, most of what lists hold, is folded byte by byte as it is compared; other text is folded into a
    /// copy first (see ``CaseFolding``).
    ///
    /// - Complexity: O(*n* · *m*) for *n* bytes of text and *m* of needle.
    static func contains(_ needle: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !needle.isEmpty else { return true }
        if isASCII(text) {
            // Folded ASCII is ASCII: a needle with other bytes cannot be in it.
            return isASCII(needle) && find(needle, in: text, folding: true)
        }
        var folded: [UInt8] = []
        folded.reserveCapacity(text.count + 8)
        CaseFolding.appendFolded(utf8: text, to: &folded)
        return folded.withUnsafeBufferPointer { find(needle, in: $0, folding: false) }
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var union: UInt8 = 0
        for byte in bytes { union |= byte }
        return union < 0x80
    }

    /// Whether `needle` occurs in `text`, each byte of `text` folded as ASCII first when `folding`.
    @inline(__always)
    private static func find(
        _ needle: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>, folding: Bool
    ) -> Bool {
        guard needle.count <= text.count else { return false }
        let first = needle[0]
        for start in 0...(text.count - needle.count) {
            let byte = folding ? CaseFolding.asciiFolded(text[start]) : text[start]
            guard byte == first else { continue }
            var index = 1
            while index < needle.count {
                let byte = folding ? CaseFolding.asciiFolded(text[start + index]) : text[start + index]
                if byte != needle[index] { break }
                index += 1
            }
            if index == needle.count { return true }
        }
        return false
    }
}
