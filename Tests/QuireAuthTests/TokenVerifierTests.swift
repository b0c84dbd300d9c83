import Foundation
import Testing

@testable import QuireAuth

/// QuireAuth's verifier on its own: tokens signed by jwt-kit (TestTokens), verified, refused and cached.
@Suite("Token verifier")
struct TokenVerifierTests {
    /// A verifier with the test settings (HS256, the test issuer and audience, no leeway).
    static func verifier(_ settings: TokenSettings = TestTokens.settings()) async throws -> TokenVerifier {
        TokenVerifier(settings: settings, keys: try await TokenKeys.load(settings))
    }

    @Test("an HS256 token is verified: its subject, its scopes, and when it stops being accepted")
    func verified() async throws {
        let verifier = try await Self.verifier()
        let claims = TestTokens.claims(sub: "alice", scope: "read:inbox-alice write:drafts-*", lifetime: 60)
        let token = try await TestTokens.hs256(claims)
        let now = Date().timeIntervalSince1970
        let verified = try verifier.verify(token, now: now)
        #expect(verified.subject == "alice")
        #expect(verified.mayRead("inbox-alice") && !verified.mayRead("inbox-bob"))
        #expect(verified.mayWrite("drafts-today") && !verified.mayWrite("inbox-alice"))
        #expect(verified.scopes == Scopes("read:inbox-alice write:drafts-*"))
        #expect(abs(verified.acceptedUntil - (now + 60)) < 2, "exp, with no leeway")
    }

    @Test("an expired token is refused as expired; within the leeway it is accepted")
    func expired() async throws {
        let token = try await TestTokens.hs256(TestTokens.claims(lifetime: -10))
        let now = Date().timeIntervalSince1970
        let strict = try await Self.verifier()
        #expect(throws: TokenRejection.expired) { try strict.verify(token, now: now) }
        let lenient = try await Self.verifier(TestTokens.settings(leeway: 30))
        #expect(try lenient.verify(token, now: now).subject == "alice")
    }

    @Test("another secret, issuer or audience, a token not valid yet and one without sub are refused as invalid")
    func invalid() async throws {
        let verifier = try await Self.verifier()
        let now = Date().timeIntervalSince1970
        let tokens = [
            try await TestTokens.hs256(TestTokens.claims(), secret: String(repeating: "other-secret-", count: 3)),
            try await TestTokens.hs256(TestTokens.claims(issuer: "https://other.example.test")),
            try await TestTokens.hs256(TestTokens.claims(audience: "other-audience")),
            try await TestTokens.hs256(TestTokens.claims(notBefore: 120)),
            try await TestTokens.hs256(TestTokens.claims(sub: nil)),
            "not.a.token",
            String(repeating: "a", count: TokenVerifier.maximumTokenBytes + 1),
        ]
        for token in tokens {
            let rejection = #expect(throws: TokenRejection.self, "\(token.prefix(40))") {
                try verifier.verify(token, now: now)
            }
            #expect(rejection != .expired, "\(token.prefix(40))")
        }
        #expect(verifier.cachedCount == 0, "nothing refused is kept")
    }

    @Test("a token is verified once, then found by its bytes until it expires; the cache stays bounded")
    func cache() async throws {
        var settings = TestTokens.settings()
        settings.cacheEntries = 4
        let keys = try await TokenKeys.load(settings)
        let verifier = TokenVerifier(settings: settings, keys: keys)
        let token = try await TestTokens.hs256(TestTokens.claims(lifetime: 60))
        let now = Date().timeIntervalSince1970
        let first = try verifier.verify(token, now: now)
        #expect(verifier.cachedCount == 1)
        #expect(try verifier.verify(token, now: now + 1) == first)
        #expect(throws: TokenRejection.expired) { try verifier.verify(token, now: now + 61) }
        #expect(verifier.cachedCount == 0)
        for index in 0..<10 {
            _ = try verifier.verify(try await TestTokens.hs256(TestTokens.claims(sub: "u\(index)")), now: now)
            #expect(verifier.cachedCount <= 4)
        }
        verifier.replaceKeys(.none)
        #expect(verifier.cachedCount == 0)
        #expect(throws: TokenRejection.self) { try verifier.verify(token, now: now) }
    }

    @Test("the cache knows a token by all its bytes: one that differs from a cached token before its end is not it")
    func cacheKeyIsTheWholeToken() async throws {
        let keys = try await TokenKeys.load(TestTokens.settings())
        let verifier = TokenVerifier(settings: TestTokens.settings(), keys: keys)
        let token = try await TestTokens.hs256(TestTokens.claims(sub: "alice"))
        let now = Date().timeIntervalSince1970
        #expect(try verifier.verify(token, now: now).subject == "alice")
        // The same length and the same last 16 bytes (the cache's hash), one byte of the payload changed.
        var bytes = Array(token.utf8)
        let payload = try #require(bytes.firstIndex(of: UInt8(ascii: "."))) + 2
        bytes[payload] = bytes[payload] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let forged = String(decoding: bytes, as: UTF8.self)
        #expect(forged.utf8.count == token.utf8.count && forged.utf8.suffix(16).elementsEqual(token.utf8.suffix(16)))
        #expect(throws: TokenRejection.self) { try verifier.verify(forged, now: now) }
        #expect(verifier.cachedCount == 1)
        #expect(try verifier.verify(token[...], now: now).subject == "alice")
    }
}
