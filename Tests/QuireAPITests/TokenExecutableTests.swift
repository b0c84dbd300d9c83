import Foundation
import JWTKit
import QuireHTTP
import QuireTesting
import Testing

@testable import QuireAPI
@testable import QuireAuth

/// `quire serve` with JSON Web Tokens and `quire token`, as an operator runs them: key rotation through
/// the JWKS file and SIGHUP, settings that stop start-up, the access log's subject.
@Suite("quire executable: tokens", .serialized)
struct TokenExecutableTests {
    static func get(_ port: Int, _ target: String, token: String? = nil) throws -> ClientResponse {
        try HTTPClientConnection(host: "127.0.0.1", port: port).request(
            "GET", target, headers: token.map { bearer($0) } ?? [])
    }

    /// Waits until the child's output contains `text`.
    static func waitForOutput(_ child: QuireProcess, _ text: String, count: Int = 1) throws {
        for _ in 0..<400 {
            if child.output.components(separatedBy: text).count - 1 >= count { return }
            usleep(25_000)
        }
        throw HTTPClientError("quire never logged \(text): \(child.output)")
    }

    @Test("key rotation: a new JWKS file and SIGHUP; old-key tokens stop working, new ones work, no restart")
    func rotation() async throws {
        let jwks = TestTokens.temporaryPath("jwks.json")
        defer { try? FileManager.default.removeItem(atPath: jwks) }
        let (old, new) = (ES256PrivateKey(), ES256PrivateKey())
        try TestTokens.writeJWKS(jwks, ecdsa: ["k-old": old], rsa: false)
        let child = try ExecutableTests.child(
            ["serve", "--port", "0", "--log-format", "json"], environment: ["QUIRE_AUTH_JWT_JWKS_FILE": jwks])
        let port = try child.waitForPort()
        try child.waitUntilReady(port: port)
        let claims = TestTokens.claims(sub: "alice", scope: "read:demo", issuer: nil, audience: nil)
        let oldToken = try await TestTokens.es256(claims, key: old, kid: "k-old")
        let newToken = try await TestTokens.es256(claims, key: new, kid: "k-new")
        #expect(try Self.get(port, "/v1/lists/demo?limit=1", token: oldToken).status == 200)
        #expect(try Self.get(port, "/v1/lists/demo?limit=1", token: newToken).status == 401)
        #expect(try Self.get(port, "/v1/lists/demo?limit=1").status == 401)

        try TestTokens.writeJWKS(jwks, ecdsa: ["k-new": new], rsa: false)
        kill(child.pid, SIGHUP)
        try Self.waitForOutput(child, "JWKS reloaded")
        #expect(try Self.get(port, "/v1/lists/demo?limit=1", token: oldToken).status == 401)
        #expect(try Self.get(port, "/v1/lists/demo?limit=1", token: newToken).status == 200)

        // A file that does not parse: logged, and the keys in use stay.
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: jwks))
        kill(child.pid, SIGHUP)
        try Self.waitForOutput(child, "cannot reload the JWKS file")
        #expect(try Self.get(port, "/v1/lists/demo?limit=1", token: newToken).status == 200)
        #expect(child.process.isRunning)

        kill(child.pid, SIGTERM)
        #expect(child.waitForExit(seconds: 10) == 0)
        // The access log (written whole by now) names the subject, never the token.
        #expect(child.output.contains(#""subject":"alice""#))
        #expect(!child.output.contains(newToken) && !child.output.contains(oldToken))
    }

    @Test(
        "settings that cannot be right stop start-up with exit 2, naming the key",
        arguments: [
            (["QUIRE_AUTH_JWT_SECRET": "too-short"], "auth.jwt.secret"),
            (["QUIRE_AUTH_JWT_JWKS_FILE": "{jwks}"], "auth.jwt.jwksFile"),
            (["QUIRE_AUTH_JWT_JWKS_FILE": "/nonexistent/jwks.json"], "auth.jwt.jwksFile"),
            (["QUIRE_AUTH_JWT_LEEWAY": "-1"], "auth.jwt.leeway"),
        ])
    func refusedSettings(environment: [String: String], key: String) throws {
        let jwks = TestTokens.temporaryPath("jwks.json")
        defer { try? FileManager.default.removeItem(atPath: jwks) }
        try Data(#"{"keys":[{"kty":"EC","crv":"P-256","kid":"k"}]}"#.utf8).write(to: URL(fileURLWithPath: jwks))
        let child = try ExecutableTests.child(
            ["serve", "--port", "0"], environment: environment.mapValues { $0 == "{jwks}" ? jwks : $0 })
        #expect(child.waitForExit(seconds: 10) == 2)
        #expect(child.output.contains(key), "\(child.output)")
    }

    @Test("quire token mints an HS256 token that the server accepts, for the given subject, scopes and lifetime")
    func mint() async throws {
        let child = try ExecutableTests.child(
            ["token", "--sub", "alice", "--scope", "read:inbox-alice write:drafts-*", "--ttl", "15m"],
            environment: ["QUIRE_AUTH_JWT_SECRET": TestTokens.secret])
        #expect(child.waitForExit(seconds: 10) == 0)
        let token = try #require(child.output.split(separator: "\n").last.map(String.init))
        var settings = TokenSettings()
        settings.secret = TestTokens.secret
        settings.leewaySeconds = 0
        let keys = try await TokenKeys.load(settings)
        let now = Date().timeIntervalSince1970
        let verified = try TokenVerifier.verify(token, keys: keys, settings: settings, now: now)
        #expect(verified.subject == "alice")
        #expect(verified.scopes.mayRead("inbox-alice") && !verified.scopes.mayRead("inbox-bob"))
        #expect(verified.scopes.mayWrite("drafts-x"))
        #expect(abs(verified.acceptedUntil - now - 900) < 5)

        let noSecret = try ExecutableTests.child(["token", "--sub", "alice"])
        #expect(noSecret.waitForExit(seconds: 10) == 2)
        #expect(noSecret.output.contains("auth.jwt.secret"))
        let badTTL = try ExecutableTests.child(
            ["token", "--sub", "alice", "--ttl", "soon", "--secret", TestTokens.secret])
        #expect(badTTL.waitForExit(seconds: 10) != 0)
    }
}
