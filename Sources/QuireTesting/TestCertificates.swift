import Foundation
public import QuireHTTP

/// A certificate authority made for one test with the `openssl` command line, in a temporary folder, and
/// the server certificates it signs (for `localhost` and `127.0.0.1`).
public final class TestCertificates: Sendable {
    public let directory: String
    /// The authority's certificate (PEM): what clients trust.
    public let authorityFile: String

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("quire-tls-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        authorityFile = directory + "/ca.pem"
        try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-sha256",
            "-days", "30", "-keyout", directory + "/ca.key", "-out", authorityFile, "-subj", "/CN=Quire test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A client configuration trusting this authority.
    public var clientTLS: ClientTLS { ClientTLS(certificateAuthorityFile: authorityFile) }

    /// Issues a server certificate with `serial` (hex) and its key, as `<name>.pem` and `<name>.key`.
    ///
    /// - Parameters:
    ///   - days: validity from now; a negative number makes an expired certificate.
    ///   - rsa: an RSA key instead of an ECDSA one.
    public func issue(_ name: String, serial: String, days: Int = 30, rsa: Bool = false) throws -> TLSConfiguration {
        let (certificate, key, request) = (path(name + ".pem"), path(name + ".key"), path(name + ".csr"))
        let keyOptions = rsa ? ["rsa:2048"] : ["ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        try Self.openssl(
            ["req", "-newkey"] + keyOptions + ["-nodes", "-keyout", key, "-out", request, "-subj", "/CN=localhost"])
        let extensions = path(name + ".ext")
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n".write(
            toFile: extensions, atomically: true, encoding: .utf8)
        try Self.openssl([
            "x509", "-req", "-in", request, "-CA", authorityFile, "-CAkey", path("ca.key"), "-set_serial",
            "0x\(serial)",
            "-days", "\(days)", "-sha256", "-extfile", extensions, "-out", certificate,
        ])
        return TLSConfiguration(certificateFile: certificate, keyFile: key)
    }

    /// A path inside the folder.
    public func path(_ name: String) -> String { directory + "/" + name }

    /// Runs `openssl` with `arguments`; throws with its output when it fails.
    @discardableResult
    public static func openssl(_ arguments: [String], input: String? = nil) throws -> String {
        try run("/usr/bin/openssl", arguments, input: input)
    }

    /// Runs a program to its end; throws with its output when it exits non-zero.
    @discardableResult
    public static func run(_ program: String, _ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw HTTPClientError(
                "\(program) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(text)")
        }
        return text
    }
}
