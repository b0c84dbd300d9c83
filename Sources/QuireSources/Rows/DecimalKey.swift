/// A number read from its decimal text (`-12.5`, `1e+100`, `0.000123`, `NaN`, `Infinity`), compared exactly by
/// value, whatever its precision: what ordering smallint, bigint, real, double precision and numeric values alike
/// needs, as PostgreSQL orders them.
///
/// PostgreSQL puts `NaN` above every number, `Infinity` included, and holds `NaN` equal to itself; `-0` equals `0`;
/// `1.50` equals `1.5`. A real or double's text is the shortest that reads back as its value, so two of them order as
/// their values do.
struct DecimalKey: Sendable, Hashable, Comparable {
    enum Rank: Int8, Sendable {
        case negativeInfinity = 0, finite = 1, positiveInfinity = 2, notANumber = 3
    }

    let rank: Rank
    /// -1, 0 or 1.
    let sign: Int8
    /// The significant digits (0 to 9), without leading or trailing zeros; empty for zero.
    let digits: [UInt8]
    /// The value is `0.d₁d₂d₃… × 10^exponent`, `d₁` not 0.
    let exponent: Int

    private init(rank: Rank, sign: Int8 = 0, digits: [UInt8] = [], exponent: Int = 0) {
        self.rank = rank
        self.sign = sign
        self.digits = digits
        self.exponent = exponent
    }

    /// The number `text` writes, or `nil` when it is not a number's text.
    ///
    /// - Complexity: O(*n*) in the length of `text`.
    init?(_ text: String) {
        switch text {
        case "NaN", "nan": self.init(rank: .notANumber)
        case "Infinity", "inf", "+Infinity": self.init(rank: .positiveInfinity)
        case "-Infinity", "-inf": self.init(rank: .negativeInfinity)
        default:
            guard let finite = Self.finite(Array(text.utf8)) else { return nil }
            self = finite
        }
    }

    private static func finite(_ bytes: [UInt8]) -> DecimalKey? {
        var index = 0
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        var digits: [UInt8] = []
        var pointPosition: Int?
        var sawDigit = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "."), pointPosition == nil {
                pointPosition = digits.count
            } else if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                digits.append(byte - UInt8(ascii: "0"))
                sawDigit = true
            } else {
                break
            }
            index += 1
        }
        guard sawDigit else { return nil }
        var exponent = pointPosition ?? digits.count
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            guard let written = Int(String(decoding: bytes[(index + 1)...], as: UTF8.self)),
                abs(written) < Int.max / 4
            else { return nil }
            exponent += written
            index = bytes.count
        }
        guard index == bytes.count else { return nil }
        let leadingZeros = digits.prefix { $0 == 0 }.count
        digits.removeFirst(leadingZeros)
        exponent -= leadingZeros
        while digits.last == 0 { digits.removeLast() }
        guard !digits.isEmpty else { return DecimalKey(rank: .finite) }
        return DecimalKey(rank: .finite, sign: negative ? -1 : 1, digits: digits, exponent: exponent)
    }

    static func < (lhs: DecimalKey, rhs: DecimalKey) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// -1, 0 or 1.
    static func compare(_ lhs: DecimalKey, _ rhs: DecimalKey) -> Int {
        if lhs.rank != rhs.rank { return lhs.rank.rawValue < rhs.rank.rawValue ? -1 : 1 }
        guard lhs.rank == .finite else { return 0 }
        if lhs.sign != rhs.sign { return lhs.sign < rhs.sign ? -1 : 1 }
        guard lhs.sign != 0 else { return 0 }
        let magnitude: Int
        if lhs.exponent != rhs.exponent {
            magnitude = lhs.exponent < rhs.exponent ? -1 : 1
        } else if lhs.digits == rhs.digits {
            magnitude = 0
        } else {
            magnitude = lhs.digits.lexicographicallyPrecedes(rhs.digits) ? -1 : 1
        }
        return lhs.sign > 0 ? magnitude : -magnitude
    }
}
