/// Reads big-endian integers, bytes and C strings from a message, each read checked against the bytes left.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0
    /// Names the message in errors.
    var messageName: String

    init(_ bytes: [UInt8], messageName: String) {
        self.bytes = bytes
        self.messageName = messageName
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    func failure(_ reason: String) -> ReplicationDecodingError {
        ReplicationDecodingError(messageName: messageName, offset: offset, reason: reason)
    }

    mutating func byte() throws(ReplicationDecodingError) -> UInt8 {
        guard offset < bytes.count else { throw failure("a byte where none is left") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func int16() throws(ReplicationDecodingError) -> Int16 {
        Int16(bitPattern: UInt16(truncatingIfNeeded: try unsigned(2, "a 16-bit integer")))
    }

    mutating func uint32() throws(ReplicationDecodingError) -> UInt32 {
        UInt32(truncatingIfNeeded: try unsigned(4, "a 32-bit integer"))
    }

    mutating func int32() throws(ReplicationDecodingError) -> Int32 {
        Int32(bitPattern: try uint32())
    }

    mutating func uint64() throws(ReplicationDecodingError) -> UInt64 {
        try unsigned(8, "a 64-bit integer")
    }

    mutating func int64() throws(ReplicationDecodingError) -> Int64 {
        Int64(bitPattern: try uint64())
    }

    /// `count` bytes.
    mutating func bytes(_ count: Int, _ what: String) throws(ReplicationDecodingError) -> [UInt8] {
        Array(try take(count, what))
    }

    /// Every byte left.
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    /// A string ended by a zero byte (the zero read and dropped), which must be UTF-8.
    mutating func string(_ what: String) throws(ReplicationDecodingError) -> String {
        guard let zero = bytes[offset...].firstIndex(of: 0) else { throw failure("\(what) without its ending zero") }
        guard let text = String(validating: bytes[offset..<zero], as: UTF8.self) else {
            throw failure("\(what) is not UTF-8")
        }
        offset = zero + 1
        return text
    }

    /// Fails unless every byte was read: a message of a known kind has no room for more.
    func expectEnd() throws(ReplicationDecodingError) {
        guard isAtEnd else { throw failure("\(remaining) bytes after the message's end") }
    }

    private mutating func unsigned(_ size: Int, _ what: String) throws(ReplicationDecodingError) -> UInt64 {
        try take(size, what).reduce(0) { $0 << 8 | UInt64($1) }
    }

    private mutating func take(_ count: Int, _ what: String) throws(ReplicationDecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else {
            throw failure("\(what) (\(count) bytes) where \(remaining) are left")
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }
}

/// Writes big-endian integers, bytes and C strings: the reader's inverse.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func int16(_ value: Int16) { unsigned(UInt64(UInt16(bitPattern: value)), 2) }
    mutating func uint32(_ value: UInt32) { unsigned(UInt64(value), 4) }
    mutating func int32(_ value: Int32) { uint32(UInt32(bitPattern: value)) }
    mutating func uint64(_ value: UInt64) { unsigned(value, 8) }
    mutating func int64(_ value: Int64) { uint64(UInt64(bitPattern: value)) }
    mutating func bytes(_ values: [UInt8]) { bytes.append(contentsOf: values) }

    mutating func string(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        bytes.append(0)
    }

    private mutating func unsigned(_ value: UInt64, _ size: Int) {
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
