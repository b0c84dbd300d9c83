#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An instant on PostgreSQL's clock: microseconds since the first instant of the year 2000, UTC (PostgreSQL's
/// epoch). The replication protocol carries commit times and the server's clock so, and a standby status update
/// sends the client's so.
public struct PostgresTimestamp: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Microseconds since PostgreSQL's epoch (negative before it).
    public var rawValue: Int64

    /// - Parameter rawValue: microseconds since PostgreSQL's epoch.
    public init(rawValue: Int64) {
        self.rawValue = rawValue
    }

    /// Microseconds from the Unix epoch to PostgreSQL's: the 30 years, 7 of them leap years, from 1970 to 2000.
    public static let unixEpochOffset: Int64 = 946_684_800_000_000

    /// The instant `microseconds` after the Unix epoch (saturated where PostgreSQL's count cannot hold it).
    public init(microsecondsSinceUnixEpoch microseconds: Int64) {
        let (value, overflow) = microseconds.subtractingReportingOverflow(Self.unixEpochOffset)
        rawValue = overflow ? .min : value
    }

    /// The instant `seconds` after the Unix epoch, to the microsecond (saturated at the bounds of the count).
    public init(secondsSinceUnixEpoch seconds: Double) {
        let microseconds = (seconds * 1_000_000).rounded()
        guard microseconds.isFinite else {
            self.init(rawValue: microseconds > 0 ? .max : .min)
            return
        }
        if microseconds >= Double(Int64.max) {
            self.init(rawValue: .max)
        } else if microseconds <= Double(Int64.min) {
            self.init(rawValue: .min)
        } else {
            self.init(microsecondsSinceUnixEpoch: Int64(microseconds))
        }
    }

    /// Microseconds since the Unix epoch (saturated where an `Int64` cannot hold them).
    public var microsecondsSinceUnixEpoch: Int64 {
        let (value, overflow) = rawValue.addingReportingOverflow(Self.unixEpochOffset)
        return overflow ? .max : value
    }

    /// Seconds since the Unix epoch.
    public var secondsSinceUnixEpoch: Double {
        Double(rawValue) / 1_000_000 + Double(Self.unixEpochOffset / 1_000_000)
    }

    /// The system's wall clock now (`CLOCK_REALTIME`), as status updates send it.
    public static func now() -> PostgresTimestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return PostgresTimestamp(
            microsecondsSinceUnixEpoch: Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000)
    }

    public static func < (lhs: PostgresTimestamp, rhs: PostgresTimestamp) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The instant as PostgreSQL prints a `timestamptz` in UTC: `YYYY-MM-DD hh:mm:ss+00`, with a fraction of a
    /// second when there is one (`.5`, `.000123`).
    public var description: String {
        let (seconds, microseconds) = Self.floorDivision(rawValue, 1_000_000)
        let (days, secondOfDay) = Self.floorDivision(seconds, 86_400)
        let (year, month, day) = Self.civilDate(daysSinceUnixEpoch: days + 10_957)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var text = "\(year)-\(two(month))-\(two(day)) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60))"
        text += ":\(two(secondOfDay % 60))"
        if microseconds != 0 {
            var fraction = String(microseconds)
            fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
            while fraction.last == "0" { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "+00"
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    /// The proleptic Gregorian date of a day counted from the Unix epoch (Howard Hinnant's `civil_from_days`).
    private static func civilDate(daysSinceUnixEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
