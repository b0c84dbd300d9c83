import Glibc

/// Header names and values, and query names, that nearly every request carries, as the literals they are.
///
/// A literal costs nothing, where decoding a field into a `String` validates its bytes and builds the string
/// (past 15 bytes on the heap): about 150 instructions a field, a few per request (callgrind). Matched byte
/// for byte, so a match gives exactly the string decoding would have given.
enum CommonStrings {
    /// The literal equal to `bytes`, or `nil`.
    static func match(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard let start = bytes.baseAddress else { return nil }
        func equal(_ literal: StaticString) -> Bool {
            memcmp(start, literal.utf8Start, bytes.count) == 0
        }
        switch bytes.count {
        case 3:
            if equal("seq") { return "seq" }
            if equal("*/*") { return "*/*" }
        case 4:
            if equal("Host") { return "Host" }
            if equal("next") { return "next" }
            if equal("prev") { return "prev" }
            if equal("wait") { return "wait" }
            if equal("gzip") { return "gzip" }
        case 5:
            if equal("limit") { return "limit" }
            if equal("since") { return "since" }
            if equal("after") { return "after" }
            if equal("close") { return "close" }
        case 6:
            if equal("Accept") { return "Accept" }
            if equal("extend") { return "extend" }
            if equal("before") { return "before" }
        case 10:
            if equal("User-Agent") { return "User-Agent" }
            if equal("Connection") { return "Connection" }
            if equal("keep-alive") { return "keep-alive" }
        case 12:
            if equal("Content-Type") { return "Content-Type" }
            if equal("X-Request-Id") { return "X-Request-Id" }
        case 13:
            if equal("Authorization") { return "Authorization" }
            if equal("If-None-Match") { return "If-None-Match" }
            if equal("Last-Event-ID") { return "Last-Event-ID" }
        case 14:
            if equal("Content-Length") { return "Content-Length" }
        case 15:
            if equal("Accept-Encoding") { return "Accept-Encoding" }
        case 16:
            if equal("application/json") { return "application/json" }
        default:
            break
        }
        return nil
    }

    /// `bytes` as a string: the literal when it is one of these, else decoded (invalid UTF-8 repaired).
    static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        match(bytes) ?? String(decoding: bytes, as: UTF8.self)
    }
}
