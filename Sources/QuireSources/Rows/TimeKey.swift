/// A date, a time or a timestamp read from PostgreSQL's text output in the ISO style (`DateStyle` `ISO`), compared
/// by time: dates, times and timestamps with or without fractional seconds, a zone offset or an era (`BC`), and the
/// infinities.
///
/// The follower sets its session's `DateStyle` to `ISO` and `TimeZone` to `UTC`, so that every timestamp with time
/// zone arrives with `+00`; an offset other than zero is read and applied all the same. A `time with time zone` is
/// ordered as PostgreSQL orders it: by the instant it names in UTC, then by its offset, east after west.
struct TimeKey: Sendable, Hashable, Comparable {
    /// -1 for `-infinity`, 1 for `infinity`, 0 for every other value.
    let infinity: Int8
    /// Days from the first of January 2000 (proleptic Gregorian calendar), 0 for a time.
    let days: Int64
    /// Microseconds into the day, in UTC when the value has an offset (below 0 or past a day for a time with time
    /// zone whose offset moves it across midnight).
    let microseconds: Int64
    /// `time with time zone`: the seconds west of UTC, PostgreSQL's second key; 0 for every other type.
    let zone: Int32

    static func < (lhs: TimeKey, rhs: TimeKey) -> Bool {
        (lhs.infinity, lhs.days, lhs.microseconds, lhs.zone) < (rhs.infinity, rhs.days, rhs.microseconds, rhs.zone)
    }

    /// The value `text` writes as a value of `kind` (`.date`, `.time`, `.timetz`, `.timestamp`, `.timestamptz`), or
    /// `nil` when it is not one in the ISO style.
    ///
    /// - Complexity: O(*n*) in the length of `text`.
    init?(_ text: String, kind: PostgresType.Kind) {
        switch text {
        case "infinity": self.init(infinity: 1, days: 0, microseconds: 0, zone: 0)
        case "-infinity": self.init(infinity: -1, days: 0, microseconds: 0, zone: 0)
        default:
            var scanner = Scanner(bytes: Array(text.utf8))
            guard let key = scanner.read(kind), scanner.atEnd else { return nil }
            self = key
        }
    }

    private init(infinity: Int8, days: Int64, microseconds: Int64, zone: Int32) {
        self.infinity = infinity
        self.days = days
        self.microseconds = microseconds
        self.zone = zone
    }

    private static let microsecondsPerDay: Int64 = 86_400_000_000

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        var atEnd: Bool { position == bytes.count }

        mutating func read(_ kind: PostgresType.Kind) -> TimeKey? {
            switch kind {
            case .date:
                guard let (year, month, day) = date() else { return nil }
                return TimeKey(infinity: 0, days: era(year, month, day), microseconds: 0, zone: 0)
            case .time, .timetz:
                guard let time = time() else { return nil }
                guard kind == .timetz else { return TimeKey(infinity: 0, days: 0, microseconds: time, zone: 0) }
                guard let offset = offset() else { return nil }
                return TimeKey(
                    infinity: 0, days: 0, microseconds: time - Int64(offset) * 1_000_000, zone: Int32(-offset))
            case .timestamp, .timestamptz:
                guard let (year, month, day) = date(), skip(UInt8(ascii: " ")), var time = time() else { return nil }
                if kind == .timestamptz {
                    guard let offset = offset() else { return nil }
                    time -= Int64(offset) * 1_000_000
                }
                let isBC = bc()
                var days = era(isBC ? 1 - year : year, month, day)
                days += time.floorDivided(by: microsecondsPerDay)
                return TimeKey(
                    infinity: 0, days: days, microseconds: time.floorModulo(microsecondsPerDay), zone: 0)
            default:
                return nil
            }
        }

        /// `YYYY-MM-DD`, and ` BC` after it for a date (a timestamp's BC follows its time).
        mutating func date() -> (Int64, Int64, Int64)? {
            guard let year = number(minimumDigits: 4), skip(UInt8(ascii: "-")), let month = number(digits: 2),
                skip(UInt8(ascii: "-")), let day = number(digits: 2), (1...12).contains(month), (1...31).contains(day)
            else { return nil }
            if position < bytes.count, bytes[position] == UInt8(ascii: " "), bytes.count - position == 3 {
                return bc() ? (1 - year, month, day) : nil
            }
            return (year, month, day)
        }

        mutating func bc() -> Bool {
            guard bytes[position...].elementsEqual(" BC".utf8) else { return false }
            position = bytes.count
            return true
        }

        /// `HH:MM:SS[.ffffff]` in microseconds (`24:00:00` is a time of its own, the end of the day).
        mutating func time() -> Int64? {
            guard let hours = number(digits: 2), skip(UInt8(ascii: ":")), let minutes = number(digits: 2),
                skip(UInt8(ascii: ":")), let seconds = number(digits: 2), hours <= 24, minutes < 60, seconds < 61
            else { return nil }
            var fraction: Int64 = 0
            if skip(UInt8(ascii: ".")) {
                var scale: Int64 = 100_000
                var any = false
                while let digit = digit() {
                    guard scale > 0 else { return nil }
                    fraction += digit * scale
                    scale /= 10
                    any = true
                }
                guard any else { return nil }
            }
            return ((hours * 60 + minutes) * 60 + seconds) * 1_000_000 + fraction
        }

        /// `+HH`, `-HH:MM`, `+HH:MM:SS`: seconds east of UTC.
        mutating func offset() -> Int? {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")
            else { return nil }
            let sign = bytes[position] == UInt8(ascii: "-") ? -1 : 1
            position += 1
            guard let hours = number(digits: 2) else { return nil }
            var seconds = Int(hours) * 3600
            if skip(UInt8(ascii: ":")) {
                guard let minutes = number(digits: 2) else { return nil }
                seconds += Int(minutes) * 60
                if skip(UInt8(ascii: ":")) {
                    guard let more = number(digits: 2) else { return nil }
                    seconds += Int(more)
                }
            }
            return sign * seconds
        }

        mutating func skip(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        mutating func digit() -> Int64? {
            guard position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) else {
                return nil
            }
            position += 1
            return Int64(bytes[position - 1] - UInt8(ascii: "0"))
        }

        mutating func number(digits count: Int) -> Int64? {
            var value: Int64 = 0
            for _ in 0..<count {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }

        /// At least `minimumDigits` digits, at most 9 (PostgreSQL's years end at 294276).
        mutating func number(minimumDigits: Int) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while count < 9, let digit = digit() {
                value = value * 10 + digit
                count += 1
            }
            return count >= minimumDigits ? value : nil
        }

        /// Days from the first of January 2000 to the date in the proleptic Gregorian calendar, `year` astronomical (1 BC is 0).
        func era(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
            let shifted = month <= 2 ? year - 1 : year
            let era = shifted.floorDivided(by: 400)
            let yearOfEra = shifted - era * 400
            let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            return era * 146_097 + dayOfEra - 730_425
        }
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(_ divisor: Int64) -> Int64 {
        self - floorDivided(by: divisor) * divisor
    }
}
