internal import CMicroHTTPD
import Glibc

/// An IPv4 or IPv6 address to bind, parsed from a literal (or `localhost`), without name resolution.
enum SocketAddress {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    init(host: String, port: Int) throws(HTTPServerError) {
        guard (0...65535).contains(port) else {
            throw .invalidConfiguration("port \(port) is not in 0...65535")
        }
        let literal = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = UInt16(port).bigEndian
            self = .v4(v4)
            return
        }
        let bare = literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = UInt16(port).bigEndian
            self = .v6(v6)
            return
        }
        throw .invalidHost(host)
    }

    /// The address in `storage` (as `getsockname` fills it), or `nil` for a family other than IPv4/IPv6.
    init?(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            self = .v4(withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) })
        case AF_INET6:
            self = .v6(withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) })
        default:
            return nil
        }
    }

    var isIPv6: Bool {
        if case .v6 = self { return true }
        return false
    }

    /// Whether only this machine can reach the address: 127.0.0.0/8, `::1`, or an IPv4-mapped 127.0.0.0/8.
    var isLoopback: Bool {
        switch self {
        case .v4(let address):
            return UInt32(bigEndian: address.sin_addr.s_addr) >> 24 == 127
        case .v6(let address):
            let bytes = withUnsafeBytes(of: address.sin6_addr) { Array($0) }
            let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            return (bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1) || (mapped && bytes[12] == 127)
        }
    }

    /// The port, in host byte order.
    var port: Int {
        switch self {
        case .v4(let address): Int(UInt16(bigEndian: address.sin_port))
        case .v6(let address): Int(UInt16(bigEndian: address.sin6_port))
        }
    }

    /// The size of the `sockaddr` that ``withSockAddr(_:)`` passes.
    var length: socklen_t {
        socklen_t(isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    }

    /// Calls `body` with a `sockaddr` pointer to this address (``length`` bytes).
    func withSockAddr<Result, Failure: Error>(_ body: (UnsafePointer<sockaddr>) throws(Failure) -> Result)
        throws(Failure) -> Result
    {
        switch self {
        case .v4(var address):
            return try withUnsafePointer(to: &address) { pointer throws(Failure) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(Failure) in
                    try body(address)
                }
            }
        case .v6(var address):
            return try withUnsafePointer(to: &address) { pointer throws(Failure) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(Failure) in
                    try body(address)
                }
            }
        }
    }
}
