internal import CMicroHTTPD
import Glibc

/// The address of a connection's peer, as 128 bits (an IPv4 address as its IPv4-mapped IPv6 form): a value that
/// hashes and compares without allocating, so that a request can be keyed by where it comes from (rate limits).
///
/// Read once per connection (`getpeername`), when libmicrohttpd announces it; every request on the connection
/// carries it.
public struct PeerAddress: Sendable, Hashable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// An address not known (a request made in code, a socket of another family): all such requests share it.
    public static let unknown = PeerAddress(high: 0, low: 0)

    /// The IPv4 address `a.b.c.d`, in its IPv4-mapped form (`::ffff:a.b.c.d`).
    public static func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> PeerAddress {
        let bits = UInt64(a) << 24 | UInt64(b) << 16 | UInt64(c) << 8 | UInt64(d)
        return PeerAddress(high: 0, low: 0xffff_0000_0000 | bits)
    }

    /// The peer of `socket`, or ``unknown``.
    static func of(socket: Int32) -> PeerAddress {
        guard socket >= 0 else { return .unknown }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(socket, $0, &length) == 0 }
        }
        guard found else { return .unknown }
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            let bits = UInt32(bigEndian: address.sin_addr.s_addr)
            return PeerAddress(high: 0, low: 0xffff_0000_0000 | UInt64(bits))
        case AF_INET6:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            return withUnsafeBytes(of: address.sin6_addr) { bytes in
                PeerAddress(
                    high: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                    low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            }
        default:
            return .unknown
        }
    }

    /// `a.b.c.d` for an IPv4 address, else the IPv6 form as `inet_ntop` writes it.
    public var description: String {
        if high == 0, low >> 32 == 0xffff {
            let bits = UInt32(truncatingIfNeeded: low)
            return "\(bits >> 24).\(bits >> 16 & 0xff).\(bits >> 8 & 0xff).\(bits & 0xff)"
        }
        var bytes = (high.bigEndian, low.bigEndian)
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = withUnsafeBytes(of: &bytes) { inet_ntop(AF_INET6, $0.baseAddress, &text, socklen_t(text.count)) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
