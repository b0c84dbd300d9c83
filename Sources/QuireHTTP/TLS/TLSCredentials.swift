internal import CMicroHTTPD
internal import CQuireTLS
import Glibc
import Synchronization

/// A certificate chain and its key, loaded into GnuTLS credentials that handshakes use.
///
/// `@unchecked Sendable` is safe: the credentials are filled once, in `load`, and only read afterwards
/// (GnuTLS shares one credentials structure between sessions on any thread, as libmicrohttpd does with its
/// own); they are freed in `deinit`, when no connection holds a reference any more (each TLS connection
/// retains the credentials it was given until libmicrohttpd reports it closed).
final class TLSCredentials: @unchecked Sendable {
    let pointer: gnutls_certificate_credentials_t
    let summary: TLSCertificateSummary

    private init(pointer: gnutls_certificate_credentials_t, summary: TLSCertificateSummary) {
        self.pointer = pointer
        self.summary = summary
    }

    deinit {
        gnutls_certificate_free_credentials(pointer)
    }

    /// Reads both files and builds credentials from them.
    ///
    /// - Throws: ``HTTPServerError`` naming the file and the reason: missing, unreadable, no PEM
    ///   certificate, no PEM key (or a wrong password), a key that does not match the certificate.
    static func load(_ configuration: TLSConfiguration) throws(HTTPServerError) -> TLSCredentials {
        let certificate = try read(configuration.certificateFile, what: "certificate")
        let key = try read(configuration.keyFile, what: "key")
        var loaded = quire_tls_loaded()
        var error: Int32 = 0
        let stage = certificate.withUnsafeBufferPointer { certificateBytes in
            key.withUnsafeBufferPointer { keyBytes in
                withOptionalCString(configuration.keyPassword) { password in
                    quire_tls_load(
                        certificateBytes.baseAddress, UInt32(certificateBytes.count), keyBytes.baseAddress,
                        UInt32(keyBytes.count), password, &loaded, &error)
                }
            }
        }
        let reason = String(cString: gnutls_strerror(error))
        switch stage {
        case QUIRE_TLS_OK:
            break
        case QUIRE_TLS_CERTIFICATE:
            throw .tls(file: configuration.certificateFile, reason: "no PEM certificate could be read (\(reason))")
        case QUIRE_TLS_KEY:
            let hint: String
            if error == GNUTLS_E_DECRYPTION_FAILED {
                hint =
                    configuration.keyPassword == nil
                    ? "the key is encrypted: set server.tls.keyPassword" : "wrong key password"
            } else {
                hint = "no PEM private key could be read"
            }
            throw .tls(file: configuration.keyFile, reason: "\(hint) (\(reason))")
        case QUIRE_TLS_PAIR:
            if error == GNUTLS_E_CERTIFICATE_KEY_MISMATCH {
                throw .tls(
                    file: configuration.keyFile,
                    reason: "this key does not match the certificate in \(configuration.certificateFile)")
            }
            throw .tls(
                file: configuration.certificateFile, reason: "GnuTLS refused the certificate and key (\(reason))")
        default:
            throw .tls(file: configuration.certificateFile, reason: "cannot load (\(reason))")
        }
        let summary = TLSCertificateSummary(
            subject: withUnsafeBytes(of: loaded.subject) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            },
            serial: withUnsafeBytes(of: loaded.serial) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) },
            notBefore: Int(loaded.not_before), notAfter: Int(loaded.not_after), chainLength: Int(loaded.chain_length))
        return TLSCredentials(pointer: loaded.credentials, summary: summary)
    }

    /// Checks a GnuTLS priority string.
    static func checkPriorities(_ priorities: String) throws(HTTPServerError) {
        var offset: Int32 = -1
        let result = quire_tls_check_priorities(priorities, &offset)
        guard result < 0 else { return }
        let bad = offset >= 0 ? String(priorities.utf8.dropFirst(Int(offset))) ?? "" : ""
        throw .invalidConfiguration(
            "invalid TLS priority string '\(priorities)'\(bad.isEmpty ? "" : " at '\(bad)'"): \(String(cString: gnutls_strerror(result)))"
        )
    }

    /// The whole file, at most 1 MiB (a certificate chain is a few kilobytes).
    private static func read(_ path: String, what: String) throws(HTTPServerError) -> [UInt8] {
        guard !path.isEmpty else { throw .tls(file: "(none)", reason: "no \(what) file configured") }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .tls(file: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .tls(file: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes += chunk[..<count]
            if bytes.count > 1 << 20 { throw .tls(file: path, reason: "larger than 1 MiB: not a \(what) file") }
        }
        guard !bytes.isEmpty else { throw .tls(file: path, reason: "the file is empty") }
        return bytes
    }
}

func withOptionalCString<Result>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}

/// A session-ticket key: clients resume TLS sessions with tickets sealed under it (no full handshake).
///
/// `@unchecked Sendable` is safe: the key is generated once and only read afterwards (GnuTLS copies it
/// into each session); it is wiped and freed in `deinit`.
final class TLSTicketKey: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<gnutls_datum_t>

    init?() {
        guard let pointer = quire_tls_ticket_key_new() else { return nil }
        self.pointer = pointer
    }

    deinit {
        quire_tls_ticket_key_free(pointer)
    }
}

/// The credentials new TLS connections get, replaced on reload; the ticket key of the server's life.
struct TLSState {
    var configuration: TLSConfiguration
    var credentials: TLSCredentials
    var ticketKey: TLSTicketKey?
}
