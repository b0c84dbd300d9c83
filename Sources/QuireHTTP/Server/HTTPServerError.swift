import Glibc

/// Why the server could not do what was asked, with a stable description.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case invalidHost(String)
        case invalidConfiguration(String)
        case cannotStart(host: String, port: Int, reason: String)
        case alreadyStarted
        case tls(file: String, reason: String)
    }

    private let code: Code

    /// The host is neither an IP address literal nor `localhost`.
    public static func invalidHost(_ host: String) -> Self { Self(code: .invalidHost(host)) }
    /// A setting is out of range; the text names it.
    public static func invalidConfiguration(_ reason: String) -> Self { Self(code: .invalidConfiguration(reason)) }
    /// libmicrohttpd refused to start (the port is taken, the address is not local, …).
    static func cannotStart(host: String, port: Int, errno: Int32) -> Self {
        let reason = errno == 0 ? "libmicrohttpd refused the configuration" : String(cString: strerror(errno))
        return Self(code: .cannotStart(host: host, port: port, reason: reason))
    }
    /// A TLS certificate or key file cannot be used; the text names the file and the reason.
    public static func tls(file: String, reason: String) -> Self { Self(code: .tls(file: file, reason: reason)) }
    /// `start()` was called twice.
    public static var alreadyStarted: Self { Self(code: .alreadyStarted) }

    public var description: String {
        switch code {
        case .invalidHost(let host):
            "invalid host '\(host)': expected an IPv4 or IPv6 address, or localhost"
        case .invalidConfiguration(let reason):
            "invalid server configuration: \(reason)"
        case .cannotStart(let host, let port, let reason):
            "cannot listen on \(host):\(port): \(reason)"
        case .alreadyStarted:
            "the server is already started"
        case .tls(let file, let reason):
            "TLS: \(file): \(reason)"
        }
    }
}
