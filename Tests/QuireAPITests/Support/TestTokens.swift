import Foundation
import JWTKit
import Testing

@testable import QuireAuth

/// Keys and tokens for the access tests: an HS256 secret, an RSA key (a fixed test key, so that no test
/// waits for RSA key generation) and ES256 keys made afresh, a JWKS file of their public halves, and
/// tokens signed by jwt-kit.
enum TestTokens {
    static let secret = "quire-test-secret-0123456789abcdef"
    static let issuer = "https://id.example.test"
    static let audience = "quire-tests"

    /// A 2048-bit RSA key made for these tests (openssl genpkey), never used anywhere else.
    static let rsaPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCz5z7tnNUQmtvU
        kcmYmR3wKqo1ouYUD/iFpuh4+zKP8moKm/0eDYptH6+VNQPE3uej0w7uPRNxEQX+
        jUjS8uCwAVjOX9tQ+rjPBeLEuGuV7MxMhuc0yLcZM9G70hL8ZADGduXjw47ZZwL7
        h7CRZwbfcaTD6KLCYrF1qKcokNbs2Zw3Ipjs9WY4Zl7q7tPL6VnHPb+dbj2ao/C0
        ek1R/voaK9QEss1tyKstJGsYIqNy2xslOKJ0+sb4/us7/rEiEZ4B7CnKJq7t/Qem
        lQANzx8kRZV3q4ChDvotHTxfgAAw6sNULUVMkQi9goV3ZLZ/kTn2zfiLqloE+tz8
        Oy+j/1gZAgMBAAECggEAAO/AEvJBOlwRWeVvubojqZeR7u6L/mho4EqSpOfrMaGk
        Q1g1ifMDGKH/bX+Vp0WLyigJSLHhCIfQqAG/R83Y3+xZ3yp+P0ksLh5h5FPwx2/b
        TmiuCnHNtjVgBEzJ1C4xwiwQnU4Wz8iVVOQ2G0OrNFLooIEfsR2yE805dYtvev3S
        wQajNKbF+9yotfCw8Mni9wg6c9ng8U5diNH9kvd7LDQB9BQ1XNvMzsRoP9qlZ4LF
        91kTKkWNpmLqTbAaSakTLbF1+tf34fcKvSvYvB0qvJt0Ou/wyd2ccrmmh8FMkckS
        fcZZfK1A6OsIOyck/AGvttGXLBy1vpVkucC7IBu6KQKBgQD5fwPuRGBZr8qbD5EM
        GmORKcDR+/pd+2IpvPrGhzaF0sDsRM573cO2PQQQkgquO6ZdegqT+D2lNJGmrXBM
        //oQxB935aCDuBcHTdRux5vok8VEKQVt96ITpeaB9rktYmhWWKqMQkJ8ByGNloJr
        97m1d630dZdaQebq0U8KLkAU9QKBgQC4l890Sk1JlkIKsStYR3m2atF7I+SVUn0M
        /JtejfY/PWcJM3OursmNlkvcxDPHE04lQNjhVI4q8SZXPRY5ykbyFu0UtmpcSNbX
        Sq5hB75EnZ1UI9/uihxAMdkdp09lkJ97erEsk7GIdOPrm9GOE0goMpv1TVCC+yB4
        X5sSskMgFQKBgCrklkVpRfNFUJy14WbmRoXXWsn++v0bUbYBQk/NQSdioz47WhBb
        gOEcvk0m/mUT5jcd2yGzRM3ZKs0v9iWWwGQPg6V2OdFLXdIopEPjVz914C0mrENK
        lnewRt/DDfTqfSuTFMcGQS3XgAI6hPOQ5EF5cNOdP8cJm2x1TZRffS7dAoGBAIae
        2EG0Cmd3OJS5nqXUApShlEJc69BmhyJYeyrbF1IJgsI4Ds6/U+h5SrwnLqepkZ0j
        jMfQNZplohOPTk05EsJtK9umKS1CRcRfB4tl7UH3PIznWOGLQY0jjXbN1N56OYUA
        9oNO9vNQZAQo8AvQThhayFh+WRAc+xIuj1Z0QPX9AoGAT4fGc4d3RKcWTw5581Ke
        T0jcTXxr4IFHKsCmCFK7bkC/5Q+mxt17HI7PvaERXuFt5tP1Jw/kbEy3FP9A9Zqr
        cwk2w5Q90j5K/w7RPpN48UR+1G9dJpIzE8HhkY0uLSTA4gdZZmtph82+46jnntav
        dhJ4usJ4wK7zuFo8YiKg224=
        -----END PRIVATE KEY-----
        """

    static var rsaKey: Insecure.RSA.PrivateKey { get throws { try Insecure.RSA.PrivateKey(pem: rsaPEM) } }

    /// Claims valid now for `lifetime` seconds, from the test issuer to the test audience.
    static func claims(
        sub: String? = "alice", scope: String = "read:*", lifetime: Double = 300, notBefore: Double? = nil,
        issuer: String? = TestTokens.issuer, audience: String? = TestTokens.audience
    ) -> TokenClaims {
        let now = Date()
        return TokenClaims(
            sub: sub.map { SubjectClaim(value: $0) }, exp: ExpirationClaim(value: now.addingTimeInterval(lifetime)),
            nbf: notBefore.map { NotBeforeClaim(value: now.addingTimeInterval($0)) }, iat: IssuedAtClaim(value: now),
            iss: issuer.map { IssuerClaim(value: $0) }, aud: audience.map { AudienceClaim(value: [$0]) },
            scope: ScopeClaim(value: scope))
    }

    /// An HS256 token signed with `secret` (naming `kid` in its header, when given).
    static func hs256(_ claims: TokenClaims, secret: String = TestTokens.secret, kid: String? = nil) async throws
        -> String
    {
        let kid = kid.map { JWKIdentifier(string: $0) }
        let keys = await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: kid)
        return try await keys.sign(claims, kid: kid)
    }

    /// A token signed by `key` under `kid` (RS256 for RSA, ES256 for P-256).
    static func rs256(_ claims: TokenClaims, kid: String = "rsa-1") async throws -> String {
        let keys = await JWTKeyCollection().add(
            rsa: try rsaKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }

    static func es256(_ claims: TokenClaims, key: ES256PrivateKey, kid: String) async throws -> String {
        let keys = await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: kid))
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }

    /// Writes a JWKS file of the public halves of `ecdsa` keys (by kid) and, when `rsa`, the RSA key.
    static func writeJWKS(_ path: String, ecdsa: [String: ES256PrivateKey], rsa: Bool) throws {
        var keys: [JWK] = []
        for (kid, key) in ecdsa.sorted(by: { $0.key < $1.key }) {
            let parameters = try #require(key.publicKey.parameters)
            keys.append(
                .ecdsa(.es256, identifier: JWKIdentifier(string: kid), x: parameters.x, y: parameters.y, curve: .p256))
        }
        if rsa {
            let primitives = try rsaKey.publicKey.getKeyPrimitives()
            keys.append(
                .rsa(
                    .rs256, identifier: "rsa-1", modulus: base64URL(primitives.modulus),
                    exponent: base64URL(primitives.publicExponent)))
        }
        try JSONEncoder().encode(JWKS(keys: keys)).write(to: URL(fileURLWithPath: path))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The token settings of the tests: HS256, and the JWKS file when given.
    static func settings(jwksFile: String? = nil, leeway: Double = 0) -> TokenSettings {
        var settings = TokenSettings()
        settings.secret = secret
        settings.jwksFile = jwksFile
        settings.issuer = issuer
        settings.audience = audience
        settings.leewaySeconds = leeway
        return settings
    }

    /// A temporary file path.
    static func temporaryPath(_ suffix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("quire-\(UUID())-\(suffix)").path
    }
}

/// A header list with `Authorization: Bearer <token>`.
func bearer(_ token: String) -> [(String, String)] {
    [("Authorization", "Bearer \(token)")]
}
