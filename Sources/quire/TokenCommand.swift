import ArgumentParser
import Configuration
import Foundation
import QuireAPI
import QuireAuth

/// `quire token --sub alice --scope "read:inbox-alice" --ttl 1h`: an HS256 token for development, signed
/// with `auth.jwt.secret` (from `--secret`, `--config`, `QUIRE_AUTH_JWT_SECRET` or the defaults), printed
/// alone on standard output for `curl -H "Authorization: Bearer $(quire token …)"`.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print an HS256 JSON Web Token for development, signed with auth.jwt.secret."
    )

    @Option(name: .long, help: "The token's subject (sub): the user its sessions belong to.")
    var sub: String

    @Option(name: .long, help: "Space-separated scopes: read:<list> read:<prefix>* write:<list> …")
    var scope: String = ""

    @Option(name: .long, help: "Lifetime: seconds, or with a unit: 90s, 15m, 1h, 7d.")
    var ttl: String = "1h"

    @Option(name: .long, help: "A YAML configuration file (for auth.jwt.secret, issuer and audience).")
    var config: String?

    @Option(name: .long, help: "The HMAC secret, at least 32 bytes (auth.jwt.secret).")
    var secret: String?

    func validate() throws {
        guard DevelopmentToken.seconds(ttl) != nil else {
            throw ValidationError("--ttl must be a positive number of seconds, or like 90s, 15m, 1h, 7d; not '\(ttl)'")
        }
        guard !sub.isEmpty else { throw ValidationError("--sub must not be empty") }
    }

    func run() throws {
        let (config, sub, scope) = (self.config, self.sub, self.scope)
        let lifetime = DevelopmentToken.seconds(ttl)!
        var flags: [String: ConfigContent] = [:]
        if let secret { flags["auth.jwt.secret"] = .string(secret) }
        do {
            let token = try runBlocking { [flags] in
                let settings = try await Settings.load(
                    configFile: config, environment: ProcessInfo.processInfo.environment, flags: flags)
                return try await DevelopmentToken.mint(
                    subject: sub, scope: scope, lifetime: lifetime, settings: settings.service.jwt)
            }
            print(token)
        } catch {
            FileHandle.standardError.write(Data("quire token: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}
