/// A stored position key: bytes that sort (as SQLite compares blobs, `memcmp` then length) in the order of
/// the elements of one container. Between any two keys there is room for more, so placing an element
/// writes only that element's row.
///
/// A key is an ``OrderLabel`` written digit by digit, each as 4 big-endian bytes: byte order then equals
/// label order, since a label never ends with a zero digit.
public enum StoragePosition {
    /// `count` increasing keys strictly between `low` and `high` (`nil` = the open end).
    ///
    /// - Precondition: `low < high` when both are given, and both are keys made here.
    /// - Complexity: O(*count* + length of the bounds).
    public static func between(_ low: [UInt8]?, _ high: [UInt8]?, count: Int) -> [[UInt8]] {
        if low == nil && high == nil && count > 0 {
            return OrderLabel.initial(count: count).map(encode)
        }
        return OrderLabel.between(low.map(decode), high.map(decode), count: count).map(encode)
    }

    static func encode(_ label: OrderLabel) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 * label.digitCount)
        for index in 0..<label.digitCount {
            let digit = label.digit(index)
            bytes.append(UInt8(truncatingIfNeeded: digit >> 24))
            bytes.append(UInt8(truncatingIfNeeded: digit >> 16))
            bytes.append(UInt8(truncatingIfNeeded: digit >> 8))
            bytes.append(UInt8(truncatingIfNeeded: digit))
        }
        return bytes
    }

    static func decode(_ bytes: [UInt8]) -> OrderLabel {
        precondition(!bytes.isEmpty && bytes.count % 4 == 0, "not a storage position")
        var digits: [UInt32] = []
        digits.reserveCapacity(bytes.count / 4)
        var index = 0
        while index < bytes.count {
            digits.append(
                UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8
                    | UInt32(bytes[index + 3]))
            index += 4
        }
        return OrderLabel(digits: digits)
    }

    /// Whether `bytes` is a well-formed key (a store checks what it reads back).
    public static func isValid(_ bytes: [UInt8]) -> Bool {
        !bytes.isEmpty && bytes.count % 4 == 0 && bytes.suffix(4) != [0, 0, 0, 0]
    }
}
