internal import CMicroHTTPD
internal import CQuireFraming
import Synchronization

/// Request ids (`X-Request-Id`): the client's when it sends a well-formed one (a ``PlainName``: 1 to 128 characters of
/// `A-Z a-z 0-9 . _ -`, so it can go into logs and headers as it is), else 15 hex digits of its own.
///
/// A client's id is echoed on every response. A generated one is sent on the responses made for their
/// request (session answers, writes, problems), and left off the prepared ones sent from memory as they
/// are (`/healthz`, cached pages): adding a field would cost each of those a libmicrohttpd response of its
/// own. The access log names the id either way.
enum RequestIdentifier {
    static let header = "X-Request-Id"

    /// A request's id as kept until read: the client's, or a generated one's counter. Formatted only when
    /// read: a prepared answer sent without the access log never reads it, and so never formats it.
    enum Value: Sendable {
        case given(String)
        case generated(counter: UInt32)

        var text: String {
            switch self {
            case .given(let text): text
            case .generated(let counter): RequestIdentifier.format(prefix: RequestIdentifier.prefix, counter: counter)
            }
        }
    }

    /// The id of the request on `connection`, and whether the client sent it: its `X-Request-Id` as the framing
    /// scan found it (`scannedAll`: the scan read every field), or looked up when the scan stopped at a refusal.
    static func of(_ fields: borrowing quire_framing_fields, scannedAll: Bool, on connection: OpaquePointer) -> (
        id: Value, sent: Bool
    ) {
        var given: String?
        if let value = fields.request_id {
            given = String(
                decoding: UnsafeRawBufferPointer(start: value, count: fields.request_id_size), as: UTF8.self)
        } else if !scannedAll, let value = MHD_lookup_connection_value(connection, .HEADER_KIND, "X-Request-Id") {
            // The literal, not `header`: a literal passes its own C string, a short `String` would be copied
            // to the heap for the call.
            given = String(cString: value)
        }
        if let given, PlainName.isValid(given) { return (.given(given), true) }
        return (next(), false)
    }

    /// 28 random bits chosen at start, then a 32-bit counter: unique within and across processes in
    /// practice, and no system call per request (ids are for finding a request in the logs, not secrets).
    /// 15 digits, not 16: a string of at most 15 bytes is stored inline, so an id costs no allocation.
    fileprivate static let prefix = UInt32.random(in: 0..<(1 << 28))
    private static let counter = Atomic<UInt32>(0)

    /// A new id, kept as its counter until read.
    static func next() -> Value {
        .generated(counter: counter.add(1, ordering: .relaxed).newValue)
    }

    /// A new id, formatted.
    static func generate() -> String {
        next().text
    }

    /// The 15 hex digits of `prefix` (28 bits) and `counter`, most significant first: what `String(_:radix:)`
    /// of `UInt64(prefix) << 32 | UInt64(counter)` gives, zero-padded to 15 digits. Every request not sending
    /// its own id makes one, so the digits are made 8 at a time rather than one by one.
    ///
    /// - Precondition: `prefix < 1 << 28`.
    static func format(prefix: UInt32, counter: UInt32) -> String {
        let (high, low) = (hexDigits(prefix), hexDigits(counter))
        return String(unsafeUninitializedCapacity: 15) { buffer in
            withUnsafeBytes(of: high) { digits in  // the 8th digit from the right of a 28-bit prefix is always 0
                for index in 0..<7 { buffer[index] = digits[index + 1] }
            }
            withUnsafeBytes(of: low) { digits in
                for index in 0..<8 { buffer[7 + index] = digits[index] }
            }
            return 15
        }
    }

    /// The 8 lowercase hex digits of `value` as the bytes of a word, most significant first in memory: each
    /// nibble spread into a byte of its own, then turned into its ASCII digit in all 8 bytes at once.
    private static func hexDigits(_ value: UInt32) -> UInt64 {
        var spread = UInt64(value)
        spread = (spread | spread << 16) & 0x0000_FFFF_0000_FFFF
        spread = (spread | spread << 8) & 0x00FF_00FF_00FF_00FF
        spread = (spread | spread << 4) & 0x0F0F_0F0F_0F0F_0F0F  // byte i holds nibble i, least significant first
        // 1 in the bytes whose nibble is 10 or more (nibble + 6 carries into bit 4; a byte never overflows).
        let letters = ((spread &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        // '0' + nibble, and for a letter 39 more: 'a' - '0' - 10.
        let ascii = spread &+ 0x3030_3030_3030_3030 &+ letters &* 39
        return ascii.bigEndian  // nibble 7 (the most significant) at the lowest address
    }
}
