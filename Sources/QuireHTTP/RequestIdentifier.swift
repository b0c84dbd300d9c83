internal import CMicroHTTPD
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

    /// The id of the request on `connection`, and whether the client sent it.
    static func of(_ connection: OpaquePointer) -> (id: String, sent: Bool) {
        // The literal, not `header`: a literal passes its own C string, a short `String` would be copied
        // to the heap for the call.
        if let value = MHD_lookup_connection_value(connection, .HEADER_KIND, "X-Request-Id") {
            let given = String(cString: value)
            if PlainName.isValid(given) { return (given, true) }
        }
        return (generate(), false)
    }

    /// 28 random bits chosen at start, then a 32-bit counter: unique within and across processes in
    /// practice, and no system call per request (ids are for finding a request in the logs, not secrets).
    /// 15 digits, not 16: a string of at most 15 bytes is stored inline, so an id costs no allocation.
    private static let prefix = UInt64(UInt32.random(in: 0..<(1 << 28))) << 32
    private static let counter = Atomic<UInt32>(0)

    static func generate() -> String {
        var value = prefix | UInt64(counter.add(1, ordering: .relaxed).newValue)
        return String(unsafeUninitializedCapacity: 15) { buffer in
            for index in (0..<15).reversed() {
                let digit = UInt8(truncatingIfNeeded: value & 0xF)  // arithmetic, not a table: no lazy global to check
                buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") - 10 + digit
                value >>= 4
            }
            return 15
        }
    }
}
