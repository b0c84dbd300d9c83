/// Names that go into logs, header fields and URL paths as they are, unescaped: 1 to 128 characters of
/// `A-Z a-z 0-9 . _ -`. Request ids (`X-Request-Id`) and list names are such names.
public enum PlainName {
    public static let maximumLength = 128

    public static func isValid(_ text: String) -> Bool {
        guard (1...maximumLength).contains(text.utf8.count) else { return false }
        // Over the bytes as a buffer: the UTF-8 view's iterator would cost more than the check, and every page
        // request checks its list's name.
        return text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isPlain) } ?? text.utf8.allSatisfy(isPlain)
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
