/// A position in PostgreSQL's write-ahead log (its type `pg_lsn`): a byte offset into the log, printed as two
/// hexadecimal halves, the high 32 bits, a slash, then the low 32 bits.
///
/// Slots, commits and status updates all speak in these positions: a commit's end position is what a follower
/// confirms once the commit is applied, and the difference of two positions is a distance in bytes of log.
public struct LSN: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible,
    LosslessStringConvertible
{
    /// The byte offset into the log.
    public var rawValue: UInt64

    /// - Parameter rawValue: the byte offset into the log.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// - Parameter rawValue: the byte offset into the log.
    public init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// `0/0`, PostgreSQL's invalid position: "no position" in a status update, "where the slot is" in
    /// `START_REPLICATION`.
    public static let invalid = LSN(0)

    /// Parses PostgreSQL's text form, as `pg_lsn`'s input does: one to eight hexadecimal digits (either case), a
    /// slash, one to eight more, nothing else.
    ///
    /// - Returns: nil when `description` is not of that form.
    /// - Complexity: O(*n*) in the length of `description`.
    public init?(_ description: String) {
        let parts = description.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 2, let high = Self.half(parts[0]), let low = Self.half(parts[1]) else { return nil }
        rawValue = UInt64(high) << 32 | UInt64(low)
    }

    /// PostgreSQL's text form: both halves in upper-case hexadecimal without leading zeros, separated by a slash.
    public var description: String {
        String(rawValue >> 32, radix: 16, uppercase: true) + "/"
            + String(rawValue & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    public static func < (lhs: LSN, rhs: LSN) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The bytes of log from `self` to `later` (negative when `later` is before `self`), as
    /// `pg_wal_lsn_diff(later, self)` counts them; saturated at `Int64`'s bounds.
    public func distance(to later: LSN) -> Int64 {
        if later.rawValue >= rawValue {
            let difference = later.rawValue - rawValue
            return difference > UInt64(Int64.max) ? .max : Int64(difference)
        }
        let difference = rawValue - later.rawValue
        return difference > UInt64(Int64.max) ? .min : -Int64(difference)
    }

    private static func half(_ digits: Substring.UTF8View) -> UInt32? {
        guard (1...8).contains(digits.count) else { return nil }
        var value: UInt32 = 0
        for digit in digits {
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = digit - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(nibble)
        }
        return value
    }
}
