import FoundationEssentials
import JWTKit

/// The settings of JSON Web Tokens (openapi.yaml): `auth.jwt.*`.
public struct TokenSettings: Sendable, Equatable {
    /// The HMAC secret of HS256 tokens (`auth.jwt.secret`); at least 32 bytes; `nil` refuses HS256.
    public var secret: String?
    /// A JWKS file with the RS256 and ES256 public keys, each with its `kid` (`auth.jwt.jwksFile`); read
    /// again on SIGHUP. `nil` refuses RS256 and ES256.
    public var jwksFile: String?
    /// The `iss` every token must carry (`auth.jwt.issuer`); `nil` checks none.
    public var issuer: String?
    /// The audience every token's `aud` must name (`auth.jwt.audience`); `nil` checks none.
    public var audience: String?
    /// Seconds of clock skew allowed on `exp` and `nbf` (`auth.jwt.leeway`, default 30).
    public var leewaySeconds: Double = 30
    /// Verified tokens kept, by their bytes, until they expire (`auth.jwt.cacheEntries`, default 10,000).
    public var cacheEntries = 10_000

    /// The shortest HMAC secret accepted: as long as the SHA-256 output (RFC 7518 §3.2).
    public static let minimumSecretBytes = 32

    public init() {}

    /// Whether tokens are checked at all (a secret or a JWKS file is configured).
    public var isEnabled: Bool { secret != nil || jwksFile != nil }
}

/// The keys tokens are verified with: the HS256 secret and the JWKS file's public keys, each turned
/// into a jwt-kit algorithm once, so that verifying a token is synchronous (jwt-kit's key collection is
/// an actor; its algorithms' `verify(_:signs:)` is not).
///
/// Loading is asynchronous and runs at start-up and on SIGHUP, never on a libmicrohttpd thread.
public struct TokenKeys: Sendable {
    /// HS256 with the configured secret.
    let hmac: (any JWTAlgorithm)?
    /// RS256 and ES256 keys by `kid`; each algorithm's `name` is the only `alg` it verifies.
    let byKeyID: [String: any JWTAlgorithm]

    /// No keys: every token is refused.
    public static let none = TokenKeys(hmac: nil, byKeyID: [:])

    /// Whether HS256 tokens are accepted (a secret is configured).
    public var acceptsHS256: Bool { hmac != nil }

    /// The `kid`s of the JWKS keys, sorted, for logs.
    public var keyIDs: [String] { byKeyID.keys.sorted() }

    /// The algorithms of the JWKS keys accepted.
    static let jwksAlgorithms: Set<String> = ["RS256", "ES256"]

    /// Loads every key `settings` names.
    ///
    /// - Throws: ``TokenKeysError`` naming the setting: a secret shorter than 32 bytes, a JWKS file that
    ///   cannot be read or does not parse, has no keys, a key without `kid`, or of another algorithm.
    public static func load(_ settings: TokenSettings) async throws(TokenKeysError) -> TokenKeys {
        var hmac: (any JWTAlgorithm)?
        if let secret = settings.secret {
            guard secret.utf8.count >= TokenSettings.minimumSecretBytes else {
                throw TokenKeysError(
                    key: "auth.jwt.secret",
                    "must be at least \(TokenSettings.minimumSecretBytes) bytes (it has \(secret.utf8.count))")
            }
            do {
                hmac = try await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
                    .getKey()
            } catch {
                throw TokenKeysError(key: "auth.jwt.secret", "cannot be used: \(error)")
            }
        }
        var byKeyID: [String: any JWTAlgorithm] = [:]
        if let file = settings.jwksFile {
            byKeyID = try await loadJWKS(file: file)
        }
        return TokenKeys(hmac: hmac, byKeyID: byKeyID)
    }

    /// The RS256 and ES256 keys of a JWKS file, by `kid`.
    static func loadJWKS(file: String) async throws(TokenKeysError) -> [String: any JWTAlgorithm] {
        func failure(_ message: String) -> TokenKeysError {
            TokenKeysError(key: "auth.jwt.jwksFile", "\(file): \(message)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(filePath: file))
        } catch {
            throw failure("cannot be read (\(error))")
        }
        let jwks: JWKS
        do {
            jwks = try JSONDecoder().decode(JWKS.self, from: data)
        } catch {
            throw failure("is not a JWKS document (\(error))")
        }
        guard !jwks.keys.isEmpty else { throw failure("has no keys") }
        var keys: [String: any JWTAlgorithm] = [:]
        for (index, jwk) in jwks.keys.enumerated() {
            guard let kid = jwk.keyIdentifier?.string, !kid.isEmpty else { throw failure("key \(index) has no kid") }
            guard keys[kid] == nil else { throw failure("kid \(kid) appears twice") }
            let name = jwk.algorithm?.rawValue ?? inferredAlgorithm(jwk)
            guard let name, jwksAlgorithms.contains(name) else {
                throw failure("key \(kid) is not RS256 or ES256 (alg \(jwk.algorithm?.rawValue ?? "missing"))")
            }
            do {
                let collection = try await JWTKeyCollection().add(jwk: jwk)
                let algorithm = try await collection.getKey(for: jwk.keyIdentifier, alg: name)
                guard algorithm.name == name else { throw failure("key \(kid) is not an \(name) key") }
                keys[kid] = algorithm
            } catch let error as TokenKeysError {
                throw error
            } catch {
                throw failure("key \(kid) cannot be used (\(error))")
            }
        }
        return keys
    }

    /// RS256 for an RSA key and ES256 for a P-256 key without `alg`; `nil` otherwise.
    private static func inferredAlgorithm(_ jwk: JWK) -> String? {
        if jwk.keyType == .rsa { return "RS256" }
        if jwk.keyType == .ecdsa && jwk.curve?.rawValue == "P-256" { return "ES256" }
        return nil
    }
}

/// A token setting that cannot be used, naming its configuration key.
public struct TokenKeysError: Error, CustomStringConvertible {
    /// The configuration key (`auth.jwt.jwksFile`).
    public let key: String
    public let message: String

    init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }

    public var description: String { "\(key): \(message)" }
}
