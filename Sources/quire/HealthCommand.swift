import ArgumentParser
import Foundation
import QuireHTTP

/// `quire health --url URL [--cacert FILE]`: exits 0 when the URL answers 200 (a container health check),
/// over HTTPS too.
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 when the service's /healthz answers 200, 1 otherwise."
    )

    @Option(name: .long, help: "The health URL, http:// or https://.")
    var url: String = "http://127.0.0.1:8080/healthz"

    @Option(name: .long, help: "For https: a PEM file of the certificate authorities to trust (default: the system's).")
    var cacert: String?

    @Option(name: .long, help: "Seconds to wait for an answer.")
    var timeout: Double = 3

    func run() throws {
        guard let target = HealthTarget(url) else {
            throw ValidationError("expected a URL like http://127.0.0.1:8080/healthz, not '\(url)'")
        }
        do {
            let tls = target.isHTTPS ? ClientTLS(certificateAuthorityFile: cacert) : nil
            let connection = try HTTPClientConnection(
                host: target.host, port: target.port, timeoutSeconds: timeout, tls: tls)
            let response = try connection.request("GET", target.path)
            guard response.status == 200 else {
                FileHandle.standardError.write(Data("quire health: \(url) answered \(response.status)\n".utf8))
                throw ExitCode.failure
            }
        } catch let error as HTTPClientError {
            FileHandle.standardError.write(Data("quire health: \(url): \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}

/// The parts of an `http[s]://host[:port][/path]` URL.
struct HealthTarget: Equatable {
    var host: String
    var port: Int
    var path: String
    var isHTTPS = false

    init?(_ url: String) {
        isHTTPS = url.hasPrefix("https://")
        guard url.hasPrefix("http://") || isHTTPS else { return nil }
        let rest = url.dropFirst(isHTTPS ? "https://".count : "http://".count)
        let defaultPort = isHTTPS ? 443 : 80
        let authority = rest.prefix { $0 != "/" }
        path = rest.count > authority.count ? String(rest.dropFirst(authority.count)) : "/"
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            port = after.hasPrefix(":") ? Int(after.dropFirst()) ?? -1 : defaultPort
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = Int(authority[authority.index(after: colon)...]) ?? -1
        } else {
            host = String(authority)
            port = defaultPort
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
    }
}
