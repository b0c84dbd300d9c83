import Foundation
import JWTKit
import Testing

@testable import QuireAuth

/// The keys tokens are verified with, and the development tokens `quire token` mints.
@Suite("Token keys and development tokens")
struct TokenKeysTests {
    @Test("a secret gives HS256; a JWKS file its keys by kid; neither, no key")
    func loaded() async throws {
        #expect(try await TokenKeys.load(TestTokens.settings()).acceptsHS256)
        #expect(try await TokenKeys.load(TokenSettings()).acceptsHS256 == false)
        let path = TestTokens.temporaryPath("jwks.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try TestTokens.writeJWKS(path, ecdsa: ["ec-1": ES256PrivateKey()], rsa: true)
        var settings = TokenSettings()
        settings.jwksFile = path
        let keys = try await TokenKeys.load(settings)
        #expect(keys.keyIDs == ["ec-1", "rsa-1"])
        #expect(!keys.acceptsHS256)
    }

    @Test("a short secret, or a JWKS file that cannot be read, is an error naming its key")
    func refused() async throws {
        var short = TokenSettings()
        short.secret = "short"
        let secret = await #expect(throws: TokenKeysError.self) { _ = try await TokenKeys.load(short) }
        #expect(secret?.key == "auth.jwt.secret")
        var missing = TokenSettings()
        missing.jwksFile = "/nonexistent/jwks.json"
        let file = await #expect(throws: TokenKeysError.self) { _ = try await TokenKeys.load(missing) }
        #expect(file?.key == "auth.jwt.jwksFile")
    }

    @Test("a development token is verified with the same settings, for its subject, scopes and lifetime")
    func developmentToken() async throws {
        let settings = TestTokens.settings()
        let token = try await DevelopmentToken.mint(
            subject: "bob", scope: "read:inbox-bob", lifetime: 90, settings: settings)
        let verifier = TokenVerifier(settings: settings, keys: try await TokenKeys.load(settings))
        let now = Date().timeIntervalSince1970
        let verified = try verifier.verify(token, now: now)
        #expect(verified.subject == "bob" && verified.mayRead("inbox-bob") && !verified.mayWrite("inbox-bob"))
        #expect(throws: TokenRejection.expired) { try verifier.verify(token, now: now + 91) }
        await #expect(throws: TokenKeysError.self) {
            _ = try await DevelopmentToken.mint(subject: "bob", scope: "", lifetime: 90, settings: TokenSettings())
        }
    }

    @Test("lifetimes: seconds, or with a unit s, m, h or d; nothing else")
    func lifetimes() {
        #expect(DevelopmentToken.seconds("90") == 90)
        #expect(DevelopmentToken.seconds("90s") == 90)
        #expect(DevelopmentToken.seconds("15m") == 900)
        #expect(DevelopmentToken.seconds("1h") == 3600)
        #expect(DevelopmentToken.seconds("7d") == 604_800)
        for bad in ["", "h", "0", "-5m", "1w", "1.5x", "inf"] {
            #expect(DevelopmentToken.seconds(bad) == nil, "\(bad)")
        }
    }
}
