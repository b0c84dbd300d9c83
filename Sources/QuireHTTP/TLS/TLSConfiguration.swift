import Glibc

/// HTTPS: the certificate chain and key the server presents, and the protocol versions and ciphers it
/// accepts. Set ``HTTPServer/Configuration/tls`` to serve HTTPS instead of plain HTTP.
public struct TLSConfiguration: Sendable, Equatable {
    /// A PEM file: the server's certificate first, then the intermediate certificates of its chain.
    public var certificateFile: String
    /// A PEM file with the certificate's private key (PKCS#1, SEC1 or PKCS#8, encrypted or not).
    public var keyFile: String
    /// The password of an encrypted key, or `nil`.
    public var keyPassword: String?
    /// A GnuTLS priority string: which protocol versions, ciphers, key exchanges and groups are accepted,
    /// in the server's order of preference. Default ``defaultPriorities``.
    public var priorities: String

    /// TLS 1.3 and 1.2 only (1.3 preferred: a client that offers it gets it), AEAD ciphers only
    /// (AES-GCM, ChaCha20-Poly1305), forward secrecy only (ECDHE), the server's preference first. No
    /// SSL 3, TLS 1.0 or 1.1, no CBC, RC4, 3DES, static RSA, finite-field DHE or export ciphers.
    public static let defaultPriorities =
        "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-GCM"
        + ":-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-SIGN-RSA-SHA1:-SIGN-ECDSA-SHA1:-SIGN-DSA-SHA1"
        + ":%SERVER_PRECEDENCE"

    public init(
        certificateFile: String, keyFile: String, keyPassword: String? = nil,
        priorities: String = TLSConfiguration.defaultPriorities
    ) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.keyPassword = keyPassword
        self.priorities = priorities
    }
}

/// What the logs say of a loaded certificate: its leaf's subject, serial number and validity.
public struct TLSCertificateSummary: Sendable, Equatable, CustomStringConvertible {
    /// The leaf certificate's subject (RFC 4514).
    public var subject: String
    /// The leaf certificate's serial number, hexadecimal.
    public var serial: String
    /// Seconds since 1970 (UTC).
    public var notBefore: Int
    public var notAfter: Int
    /// Certificates in the file (the leaf and its intermediates).
    public var chainLength: Int

    /// Warnings an operator should see: an expired certificate, or one not valid yet.
    public func warnings(now: Int? = nil) -> [String] {
        let now = now ?? Int(time(nil))
        var warnings: [String] = []
        if notAfter < now {
            warnings.append("the certificate expired on \(Self.format(notAfter)): clients will refuse it")
        } else if notAfter - now < 14 * 86_400 {
            warnings.append("the certificate expires on \(Self.format(notAfter))")
        }
        if notBefore > now {
            warnings.append("the certificate is not valid before \(Self.format(notBefore))")
        }
        return warnings
    }

    public var description: String {
        "\(subject) (serial \(serial), valid until \(Self.format(notAfter)), \(chainLength) in chain)"
    }

    /// `2026-11-21T17:02:51Z`.
    static func format(_ seconds: Int) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
