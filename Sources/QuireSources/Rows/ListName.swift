/// A list's name as Quire's API takes it: 1 to 128 bytes of `A-Z a-z 0-9 . _ -` (the HTTP layer's `PlainName`,
/// which this module, below HTTP, cannot import).
enum ListName {
    static let maximumBytes = 128

    static func isValid(_ name: String) -> Bool {
        (1...maximumBytes).contains(name.utf8.count) && name.utf8.allSatisfy(isAllowed)
    }

    static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
