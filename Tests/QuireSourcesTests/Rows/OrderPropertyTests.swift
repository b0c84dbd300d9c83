import PropertyBased
import QuireCore
import QuireSources
import Testing

/// Random rows of random values of every orderable type, each drawn as the value it means (a number, a time, bytes)
/// and printed as PostgreSQL prints it: sorting the rows by their keys must give the order a plain comparator of the
/// meant values gives, with the contract's rules (NULL last ascending, first descending; ties by the key).
@Suite("Order properties")
struct OrderPropertyTests {
    /// The column types of the random table, and one random direction each.
    static let types: [PostgresType] = [
        .int4, .float8, .numeric, .bool, .text, .timestamptz, .timestamp, .date, .time, .timetz, .bpchar,
    ]

    @Test func keysSortAsTheReference() async {
        await propertyCheck(count: 300, input: Gen.uint8(in: 0...255).array(of: 0...400)) { choices in
            var random = Choices(choices)
            let orderColumns = (0..<(1 + random.below(3))).map { _ in Self.types[random.below(Self.types.count)] }
            let directions = orderColumns.map { _ in random.below(2) == 0 }
            var columns = orderColumns.enumerated().map { SourceRelation.Column(name: "c\($0)", type: $1) }
            columns.append(.init(name: "id", type: .int4))
            columns.append(.init(name: "section", type: .text))
            let order = zip(columns, directions).map { JSONValue.string("\($0.name)\($1 ? " desc" : "")") }
            guard
                let source = try? SourceConfiguration(
                    entry: entry(["list": "l", "section": "section", "order": .array(order), "data": []]), index: 0,
                    environment: [:]),
                let mapping = try? RowMapping(
                    source: source, relation: SourceRelation(columns: columns, primaryKey: ["id"]))
            else {
                Issue.record("the random source was refused")
                return
            }
            var rows: [(meant: [Meant], id: Int, text: [String?])] = []
            for id in 0..<random.below(24) {
                let meant = orderColumns.map { random.value(of: $0) }
                rows.append((meant, id, meant.map(\.text) + [String(id), "s"]))
            }
            let byKeys = rows.sorted { mapping.itemKey(of: $0.text) < mapping.itemKey(of: $1.text) }.map(\.id)
            let byReference = rows.sorted { a, b in
                for index in orderColumns.indices {
                    let order = Meant.compare(a.meant[index], b.meant[index])
                    if order != 0 { return directions[index] ? order > 0 : order < 0 }
                }
                return a.id < b.id
            }.map(\.id)
            #expect(byKeys == byReference, "\(orderColumns) \(directions): \(rows.map(\.text))")
            // Inserting the rows one by one at their insertion index keeps the section sorted.
            var keys: [ItemOrderKey] = []
            for row in rows {
                let key = mapping.itemKey(of: row.text)
                keys.insert(key, at: SourceOrder.insertionIndex(of: key, in: keys))
            }
            #expect(keys == rows.map { mapping.itemKey(of: $0.text) }.sorted())
        }
    }

    @Test func exactNumbersCompareAsTheirDigits() async {
        await propertyCheck(count: 1_000, input: Gen.uint8(in: 0...255).array(of: 0...80)) { choices in
            var random = Choices(choices)
            let a = random.decimal()
            let b = random.decimal()
            let expected = Meant.compare(.decimal(a), .decimal(b))
            let (x, y) = (SortValue(a.text, type: .numeric), SortValue(b.text, type: .numeric))
            #expect((x < y) == (expected < 0) && (y < x) == (expected > 0) && (x == y) == (expected == 0), "\(a) \(b)")
            // Written out exactly, and read back exactly.
            let json = PostgresValue.json(a.text, type: .numeric)
            #expect(json.description == a.text)
            #expect((try? JSONParser(keepsNumberText: true).parse(json.description)) == json || a.isInteger)
        }
    }
}

/// Random arrays, printed as `array_out` prints them, read back to the same array.
@Suite("Array text properties")
struct ArrayPropertyTests {
    @Test func arrayTextRoundTrips() async {
        await propertyCheck(count: 1_500, input: Gen.uint8(in: 0...255).array(of: 0...200)) { choices in
            var random = Choices(choices)
            let array = random.array(depth: 1)
            let text = ArrayText.write(array)
            #expect(PostgresArray.parse(text) == array, "\(text)")
            if case .array(let elements) = array {
                let json = PostgresValue.json(text, type: PostgresType(oid: 1009))
                #expect(json.arrayValue?.count == elements.count, "\(text)")
            }
        }
    }
}

/// A value as it is meant, and its text as PostgreSQL prints it.
enum Meant {
    case null
    case integer(Int64)
    case double(Double)
    case decimal(DecimalText)
    case boolean(Bool)
    case bytes(String)
    /// Microseconds from 1970-01-01 UTC, and the offset (seconds east) it is printed with.
    case instant(Int64, offset: Int)
    /// Microseconds from 1970-01-01, a timestamp without time zone.
    case localInstant(Int64)
    /// Days from 1970-01-01.
    case day(Int64)
    /// Microseconds into the day.
    case clock(Int64)
    /// A time of day with its offset (seconds east), as `time with time zone` holds it.
    case zonedClock(Int64, offset: Int)
    /// Padded text: `character(n)` prints its value with spaces to `n`.
    case padded(String, width: Int)

    var text: String? {
        switch self {
        case .null: nil
        case .integer(let value): String(value)
        case .double(let value):
            value.isNaN ? "NaN" : value.isInfinite ? (value > 0 ? "Infinity" : "-Infinity") : "\(value)"
        case .decimal(let value): value.text
        case .boolean(let value): value ? "t" : "f"
        case .bytes(let value): value
        case .instant(let micros, let offset): Civil.timestamp(micros + Int64(offset) * 1_000_000, offset: offset)
        case .localInstant(let micros): Civil.timestamp(micros, offset: nil)
        case .day(let days): Civil.date(days)
        case .clock(let micros): Civil.clock(micros)
        case .zonedClock(let micros, let offset): Civil.clock(micros) + Civil.zone(offset)
        case .padded(let value, let width): value + String(repeating: " ", count: max(0, width - value.count))
        }
    }

    /// -1, 0 or 1: NULL after every value.
    static func compare(_ a: Meant, _ b: Meant) -> Int {
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : x == y ? 0 : 1 }
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return 1
        case (_, .null): return -1
        case (.integer(let x), .integer(let y)): return sign(x, y)
        case (.double(let x), .double(let y)):
            if x.isNaN || y.isNaN { return x.isNaN && y.isNaN ? 0 : (x.isNaN ? 1 : -1) }
            return sign(x, y)
        case (.decimal(let x), .decimal(let y)): return DecimalText.compare(x, y)
        case (.boolean(let x), .boolean(let y)): return sign(x ? 1 : 0, y ? 1 : 0)
        case (.bytes(let x), .bytes(let y)):
            return x.utf8.elementsEqual(y.utf8) ? 0 : (x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : 1)
        case (.padded(let x, _), .padded(let y, _)):
            return x.utf8.elementsEqual(y.utf8) ? 0 : (x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : 1)
        case (.instant(let x, _), .instant(let y, _)): return sign(x, y)
        case (.day(let x), .day(let y)): return sign(x, y)
        case (.localInstant(let x), .localInstant(let y)): return sign(x, y)
        case (.clock(let x), .clock(let y)): return sign(x, y)
        case (.zonedClock(let x, let xOffset), .zonedClock(let y, let yOffset)):
            // PostgreSQL's timetz_cmp: the instant in UTC, then the zone (seconds west), ascending.
            let order = sign(x - Int64(xOffset) * 1_000_000, y - Int64(yOffset) * 1_000_000)
            return order != 0 ? order : sign(-xOffset, -yOffset)
        default:
            Issue.record("values of two types in one column: \(a), \(b)")
            return 0
        }
    }
}

/// A decimal as digits: `digits` with the point `scale` digits from the right.
struct DecimalText: CustomStringConvertible {
    let negative: Bool
    let digits: String
    let scale: Int

    var isInteger: Bool { scale == 0 }

    /// As numeric prints it: `-12.340`, `0.005`.
    var text: String {
        let padded = String(repeating: "0", count: max(0, scale + 1 - digits.count)) + digits
        let integer = padded.dropLast(scale)
        let fraction = padded.suffix(scale)
        let body = scale > 0 ? "\(integer).\(fraction)" : String(integer)
        let isZero = digits.allSatisfy { $0 == "0" }
        return (negative && !isZero ? "-" : "") + body
    }

    var description: String { text }

    /// By value, aligning the two at the point: a reference that shares nothing with DecimalKey's normal form.
    static func compare(_ a: DecimalText, _ b: DecimalText) -> Int {
        let scale = max(a.scale, b.scale)
        func aligned(_ x: DecimalText) -> String {
            let whole = x.digits + String(repeating: "0", count: scale - x.scale)
            return String(whole.drop { $0 == "0" })
        }
        let (x, y) = (aligned(a), aligned(b))
        let xSign = x.isEmpty ? 0 : (a.negative ? -1 : 1)
        let ySign = y.isEmpty ? 0 : (b.negative ? -1 : 1)
        if xSign != ySign { return xSign < ySign ? -1 : 1 }
        let magnitude = x.count != y.count ? (x.count < y.count ? -1 : 1) : (x == y ? 0 : (x < y ? -1 : 1))
        return xSign < 0 ? -magnitude : magnitude
    }
}

/// Civil dates from days, the inverse of what the code under test computes (Howard Hinnant's `civil_from_days`), and
/// PostgreSQL's ISO output of dates, times and timestamps.
enum Civil {
    static func civil(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// `2026-12-01`, `0044-03-15 BC` (year 0 is 1 BC).
    static func date(_ days: Int64, bcSuffix: Bool = true) -> String {
        let (year, month, day) = civil(days)
        let shown = year <= 0 ? 1 - year : year
        let yearText = String(repeating: "0", count: max(0, 4 - String(shown).count)) + String(shown)
        return "\(yearText)-\(two(month))-\(two(day))" + (year <= 0 && bcSuffix ? " BC" : "")
    }

    /// `10:00:00`, `10:00:00.25`.
    static func clock(_ micros: Int64) -> String {
        let seconds = micros / 1_000_000
        var text = "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
        var fraction = micros % 1_000_000
        if fraction > 0 {
            var digits = 6
            while fraction % 10 == 0 {
                fraction /= 10
                digits -= 1
            }
            let written = String(fraction)
            text += "." + String(repeating: "0", count: digits - written.count) + written
        }
        return text
    }

    /// A timestamp at local microseconds from 1970, printed with its offset when it has one: `… 10:00:00+05:30`.
    static func timestamp(_ local: Int64, offset: Int?) -> String {
        let day: Int64 = 86_400_000_000
        let days = local >= 0 ? local / day : (local - day + 1) / day
        let (year, _, _) = civil(days)
        return "\(date(days, bcSuffix: false)) \(clock(local - days * day))\(offset.map(zone) ?? "")"
            + (year <= 0 ? " BC" : "")
    }

    /// `+00`, `-05:30`, `+00:00:05`.
    static func zone(_ offset: Int) -> String {
        let sign = offset < 0 ? "-" : "+"
        let magnitude = Int64(abs(offset))
        var zone = "\(sign)\(two(magnitude / 3600))"
        if magnitude % 3600 != 0 { zone += ":\(two(magnitude / 60 % 60))" }
        if magnitude % 60 != 0 { zone += ":\(two(magnitude % 60))" }
        return zone
    }
}

/// `array_out`'s text of an array.
enum ArrayText {
    static func write(_ array: PostgresArray) -> String {
        switch array {
        case .null: return "NULL"
        case .element(let text): return quoted(text)
        case .array(let elements): return "{" + elements.map(write).joined(separator: ",") + "}"
        }
    }

    static func quoted(_ text: String) -> String {
        let needs =
            text.isEmpty || text.uppercased() == "NULL"
            || text.unicodeScalars.contains { "{},\"\\".unicodeScalars.contains($0) || $0.properties.isWhitespace }
        guard needs else { return text }
        var out = "\""
        for character in text {
            if character == "\"" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out + "\""
    }
}

/// Draws from a list of bytes, 0 once it runs out: a shorter list makes a smaller case.
struct Choices {
    private let bytes: [UInt8]
    private var next = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> UInt8 {
        defer { next += 1 }
        return next < bytes.count ? bytes[next] : 0
    }

    /// 0 ..< bound.
    mutating func below(_ bound: Int) -> Int {
        Int((UInt16(byte()) << 8 | UInt16(byte())) % UInt16(bound))
    }

    mutating func int64(_ range: ClosedRange<Int64>) -> Int64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return range.lowerBound
            &+ Int64(bitPattern: value % (UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1))
    }

    mutating func decimal() -> DecimalText {
        let count = 1 + below(40)
        let digits = String((0..<count).map { _ in Character(String(below(10))) })
        let trimmed = digits.drop { $0 == "0" }
        return DecimalText(
            negative: below(2) == 0, digits: trimmed.isEmpty ? "0" : String(trimmed), scale: below(count + 1))
    }

    mutating func text() -> String {
        let alphabet: [String] = ["a", "b", "B", "z", " ", "é", "€", "😀", "\u{01}", "ab"]
        return (0..<below(5)).map { _ in alphabet[below(alphabet.count)] }.joined()
    }

    /// A value of `type`, NULL one time in eight; few distinct values, so that ties happen.
    mutating func value(of type: PostgresType) -> Meant {
        if below(8) == 0 { return .null }
        switch type {
        case .int4: return .integer(Int64(below(7)) - 3)
        case .float8:
            let specials: [Double] = [.nan, .infinity, -.infinity, 0, -0.0, 1e300, -1e-300, 0.1, 0.30000000000000004]
            return below(3) == 0 ? .double(specials[below(specials.count)]) : .double(Double(below(9) - 4) / 4)
        case .numeric: return .decimal(decimal())
        case .bool: return .boolean(below(2) == 1)
        case .text: return .bytes(text())
        case .bpchar:
            let value = text().trimmingSpaces()
            return .padded(value, width: 6)
        case .timestamp:
            guard case .instant(let micros, _) = value(of: .timestamptz) else { return .null }
            return .localInstant(micros)
        case .timetz:
            // Whole hours and offsets of whole hours: one instant written with two offsets happens, and must order
            // by the offset.
            let offsets = [0, 3600, -3600, 7200]
            return .zonedClock(Int64(8 + below(4)) * 3_600_000_000, offset: offsets[below(offsets.count)])
        case .timestamptz where below(2) == 0:
            // A few instants, each written with any offset: equal instants must tie, whatever their text.
            let offsets = [0, 3600, -18_000, 19_800]
            return .instant(Int64(below(3)) * 3_600_000_000, offset: offsets[below(offsets.count)])
        case .timestamptz:
            let micros = int64(-210_000_000_000_000_000...9_000_000_000_000_000_000).rounded(
                to: below(2) == 0 ? 1_000_000 : 1)
            let offsets = [0, 3600, -18_000, 19_800, 50_400, -34_200, 5]
            return .instant(micros, offset: offsets[below(offsets.count)])
        case .date: return .day(int64(-2_400_000...100_000_000))
        case .time: return .clock(int64(0...86_400_000_000))
        default: return .null
        }
    }

    mutating func array(depth: Int) -> PostgresArray {
        if depth < 4, below(4) == 0 {
            // Rectangular, as PostgreSQL's arrays are: every sub-array of one length.
            let count = 1 + below(3)
            let inner = (0..<count).map { _ in self.leaves(count: 1 + self.below(3)) }
            let width = inner.map(\.count).min() ?? 0
            return .array(inner.map { .array(Array($0.prefix(width))) })
        }
        return .array(leaves(count: below(5)))
    }

    mutating func leaves(count: Int) -> [PostgresArray] {
        (0..<count).map { _ in
            switch below(6) {
            case 0: return .null
            case 1: return .element(["NULL", "null", "", " ", "\\", "\"", "{", "}", ",", "a b"][below(10)])
            default: return .element(text())
            }
        }
    }
}

extension Int64 {
    fileprivate func rounded(to unit: Int) -> Int64 {
        self / Int64(unit) * Int64(unit)
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
