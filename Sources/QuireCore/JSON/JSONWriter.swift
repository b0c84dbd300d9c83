/// Writes canonical compact JSON: no whitespace, object keys sorted by their UTF-8 bytes, strings escaped
/// minimally (`"`, `\`, control characters; everything else as UTF-8), integers exact, doubles in their
/// shortest round-trip form.
public enum JSONWriter {
    /// The canonical bytes of `value`.
    ///
    /// - Complexity: O(*n*) in the size of the value (plus sorting each object's keys).
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(value, into: &out)
        return out
    }

    /// Appends the canonical bytes of `value` to `out`.
    ///
    /// - Complexity: O(*n*) in the size of the value (plus sorting each object's keys).
    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.appendLiteral("null")
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): writeInteger(Int(number), into: &out)
        case .double(let number): writeDouble(number, into: &out)
        case .decimal(let number): out.append(contentsOf: number.text.utf8)
        case .string(let string): writeString(string, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(members[key]!, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `string` as a quoted, escaped JSON string.
    ///
    /// - Complexity: O(*n*) in the UTF-8 length of `string`.
    public static func writeString(_ string: String, into out: inout [UInt8]) {
        // Most strings (ids, names) need no escape: checked over their bytes, then copied at once, since an
        // append byte by byte would check the array's capacity and count on every byte.
        let copied = string.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                return false
            }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: bytes)
            out.append(UInt8(ascii: "\""))
            return true
        }
        if copied == true { return }
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(0x5C); out.append(byte)
            case UInt8(ascii: "\\"): out.append(0x5C); out.append(byte)
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            case 0x08: out.append(0x5C); out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(0x5C); out.append(UInt8(ascii: "f"))
            case 0..<0x20:
                out.appendLiteral("\\u00")
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Appends the decimal digits of `number`.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    public static func writeInteger(_ number: some BinaryInteger, into out: inout [UInt8]) {
        if let small = Int(exactly: number) {
            writeInteger(small, into: &out)
        } else {
            out.append(contentsOf: String(number).utf8)
        }
    }

    /// Appends the decimal digits of `number`.
    ///
    /// - Complexity: O(1).
    public static func writeInteger(_ number: Int, into out: inout [UInt8]) {
        if number >= 0, number < 10 {
            out.append(UInt8(truncatingIfNeeded: number) &+ UInt8(ascii: "0"))
            return
        }
        if number >= 10, number < 100 {  // most indexes of a window's paths: two stores, no buffer
            let (tens, ones) = number.quotientAndRemainder(dividingBy: 10)
            out.append(UInt8(truncatingIfNeeded: tens) &+ UInt8(ascii: "0"))
            out.append(UInt8(truncatingIfNeeded: ones) &+ UInt8(ascii: "0"))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            var magnitude = number.magnitude
            var start = 24
            repeat {
                start -= 1
                let (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: 10)
                buffer[start] = UInt8(truncatingIfNeeded: remainder) &+ UInt8(ascii: "0")
                magnitude = quotient
            } while magnitude > 0
            if number < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<24]))
        }
    }

    /// Appends `number` in its shortest round-trip form; non-finite numbers, which JSON cannot carry,
    /// are written as `null`.
    ///
    /// - Complexity: O(1).
    public static func writeDouble(_ number: Double, into out: inout [UInt8]) {
        guard number.isFinite else {
            out.appendLiteral("null")
            return
        }
        if number == number.rounded(), abs(number) < 1e15 {
            writeInteger(Int(number), into: &out)
            out.appendLiteral(".0")
            return
        }
        out.append(contentsOf: number.description.utf8)
    }
}
