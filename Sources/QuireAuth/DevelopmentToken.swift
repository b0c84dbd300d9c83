public import FoundationEssentials
import JWTKit

/// HS256 tokens for development and tests (`quire token`), signed by jwt-kit with `auth.jwt.secret`.
public enum DevelopmentToken {
    /// A token for `subject` with `scope`, valid from now for `lifetime` seconds, carrying the
    /// configured issuer and audience.
    ///
    /// - Throws: ``TokenKeysError`` for a secret shorter than 32 bytes; jwt-kit's errors otherwise.
    public static func mint(
        subject: String, scope: String, lifetime: Double, settings: TokenSettings, now: Date = Date()
    ) async throws -> String {
        guard let secret = settings.secret, secret.utf8.count >= TokenSettings.minimumSecretBytes else {
            throw TokenKeysError(
                key: "auth.jwt.secret",
                "must be set, at least \(TokenSettings.minimumSecretBytes) bytes, to mint a token")
        }
        let claims = TokenClaims(
            sub: SubjectClaim(value: subject), exp: ExpirationClaim(value: now.addingTimeInterval(lifetime)),
            iat: IssuedAtClaim(value: now), iss: settings.issuer.map { IssuerClaim(value: $0) },
            aud: settings.audience.map { AudienceClaim(value: [$0]) }, scope: ScopeClaim(value: scope))
        let keys = await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    /// Seconds in a lifetime written `90`, `90s`, `15m`, `1h` or `7d`; `nil` when malformed or not positive.
    public static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var digits = Substring(text)
        var unit = 1.0
        if let last = text.last, let factor = units[last] {
            digits = digits.dropLast()
            unit = factor
        }
        guard let value = Double(digits), value > 0, value.isFinite else { return nil }
        return value * unit
    }
}
