import FoundationEssentials
import Glibc
import JWTKit
import Synchronization

/// A token that passed every check: who it names, what it may do, and until when.
///
/// Its values are kept in one object, shared by every copy: a request with a token copies it several times on its
/// way from the cache to the handler, and a copy of the subject and the scopes' four sets would retain and release
/// each of the five on every copy.
public struct VerifiedToken: Sendable, Equatable {
    private final class Storage: Sendable {
        let subject: String
        let scopes: Scopes
        let acceptedUntil: Double

        init(subject: String, scopes: Scopes, acceptedUntil: Double) {
            (self.subject, self.scopes, self.acceptedUntil) = (subject, scopes, acceptedUntil)
        }
    }

    private let storage: Storage

    init(subject: String, scopes: Scopes, acceptedUntil: Double) {
        storage = Storage(subject: subject, scopes: scopes, acceptedUntil: acceptedUntil)
    }

    /// The `sub` claim.
    public var subject: String { storage.subject }
    public var scopes: Scopes { storage.scopes }
    /// When the token stops being accepted: `exp` plus the leeway, in seconds since 1970.
    public var acceptedUntil: Double { storage.acceptedUntil }

    /// Whether the token's `read:` scopes cover `list` (``Scopes/mayRead(_:)``, without copying the scopes).
    public func mayRead(_ list: String) -> Bool { storage.scopes.mayRead(list) }

    /// Whether the token's `write:` scopes cover `list`.
    public func mayWrite(_ list: String) -> Bool { storage.scopes.mayWrite(list) }

    /// The names and prefixes the token's `read:` scopes cover (``Scopes/readPatterns``).
    public var readPatterns: (names: Set<String>, prefixes: Set<String>) { storage.scopes.readPatterns }

    public static func == (lhs: VerifiedToken, rhs: VerifiedToken) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.subject == rhs.subject && lhs.scopes == rhs.scopes && lhs.acceptedUntil == rhs.acceptedUntil)
    }
}

/// Why a token was refused (openapi.yaml: both are `401` with `WWW-Authenticate: Bearer error="invalid_token"`).
public enum TokenRejection: Error, Equatable {
    /// Malformed, wrongly signed, of a refused algorithm, not yet valid, of another issuer or audience.
    case invalid(String)
    /// Past its `exp` (and the leeway).
    case expired
}

/// Verifies JSON Web Tokens synchronously, on the calling thread (a libmicrohttpd worker), with jwt-kit's
/// parser, algorithms and claims; and keeps the tokens it verified, by their bytes, until they expire, so
/// that a client's later requests cost one dictionary lookup.
///
/// Refused: `alg: none` and every algorithm but HS256 (with the secret) and RS256/ES256 (with a JWKS key
/// whose own algorithm is the token's: a token's `alg` never chooses how a key is used, so an HS256 token
/// "signed" with an RSA public key finds no HMAC key but the secret); tokens without `sub` or `exp`; a
/// `crit` header. Checked: the signature, `exp` and `nbf` (with the leeway), `iss` and `aud` when
/// configured.
public final class TokenVerifier: Sendable {
    private let settings: TokenSettings
    private let state: Mutex<State>

    private struct State {
        var keys: TokenKeys
        /// Increases with every key replacement: a verification against older keys is not cached.
        var generation: UInt64 = 0
        /// By the token's bytes; every stored key owns a copy of them (`TokenKey.stored`).
        var cache: [TokenKey: VerifiedToken] = [:]
    }

    /// The longest token looked at; longer ones are refused unparsed.
    public static let maximumTokenBytes = 8192

    public init(settings: TokenSettings, keys: TokenKeys) {
        self.settings = settings
        state = Mutex(State(keys: keys))
    }

    /// Replaces the keys (SIGHUP) and forgets every verified token, so tokens of removed keys stop working.
    public func replaceKeys(_ keys: TokenKeys) {
        state.withLock { state in
            state.keys = keys
            state.generation &+= 1
            state.cache.removeAll()
        }
    }

    /// Verified tokens kept now.
    public var cachedCount: Int { state.withLock { $0.cache.count } }

    /// The token's subject and scopes, from the cache or verified now.
    ///
    /// - Complexity: O(*n*) in the token's length for a cached token (comparing it); a signature check
    ///   otherwise (docs/performance.md gives both costs).
    public func verify(_ token: String, now: Double = TokenVerifier.now()) throws(TokenRejection) -> VerifiedToken {
        try verify(token[...], now: now)
    }

    /// ``verify(_:now:)`` of a token cut from a longer string.
    public func verify(_ token: Substring, now: Double = TokenVerifier.now()) throws(TokenRejection)
        -> VerifiedToken
    {
        var token = token
        // Through a Result: `withUTF8` rethrows untyped.
        let result = token.withUTF8 { bytes in
            Result { () throws(TokenRejection) in try verify(UnsafeRawBufferPointer(bytes), now: now) }
        }
        return try result.get()
    }

    /// ``verify(_:now:)`` of a token's bytes, such as the `Authorization` field's in a request's buffer: a cached
    /// token is looked up without copying or decoding it (a `String` of the field would copy and validate it on
    /// every request with a token); only a token not seen before becomes a string, to be verified.
    public func verify(_ token: UnsafeRawBufferPointer, now: Double = TokenVerifier.now()) throws(TokenRejection)
        -> VerifiedToken
    {
        enum Lookup {
            case hit(VerifiedToken)
            case expired
            case miss(TokenKeys, generation: UInt64)
        }
        let lookup = state.withLock { state in
            let key = TokenKey.borrowed(token)
            guard let cached = state.cache[key] else { return Lookup.miss(state.keys, generation: state.generation) }
            guard now < cached.acceptedUntil else {
                state.cache.removeValue(forKey: key)
                return .expired
            }
            return .hit(cached)
        }
        let keys: TokenKeys
        let generation: UInt64
        switch lookup {
        case .hit(let cached): return cached
        case .expired: throw .expired
        case .miss(let current, let currentGeneration): (keys, generation) = (current, currentGeneration)
        }
        // Validated, not repaired: the key stored is exactly the bytes verified.
        guard let text = String(validating: token, as: UTF8.self) else {
            throw .invalid("The token is not a well-formed JSON Web Token.")
        }
        let verified = try Self.verify(text, keys: keys, settings: settings, now: now)
        let key = TokenKey.stored(TokenBytes(token))
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.cache.count >= settings.cacheEntries {
                state.cache = state.cache.filter { now < $0.value.acceptedUntil }
                // Still full of live tokens: start again rather than pick victims (bounded, and cheap).
                if state.cache.count >= settings.cacheEntries { state.cache.removeAll(keepingCapacity: true) }
            }
            state.cache[key] = verified
        }
        return verified
    }

    /// The time now, in seconds since 1970: what tokens' `exp` and `nbf` are compared with. `clock_gettime`, not
    /// `Date()`, which does more work for the same value on every request with a token.
    public static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
    }

    /// Every check of a token not seen before.
    static func verify(
        _ token: String, keys: TokenKeys, settings: TokenSettings, now: Double
    ) throws(TokenRejection) -> VerifiedToken {
        let bytes = Array(token.utf8)
        guard bytes.count <= maximumTokenBytes else { throw .invalid("The token is too long.") }
        let parser = DefaultJWTParser()
        let header: JWTHeader
        let claims: TokenClaims
        let signature: Data
        let signingInput: ArraySlice<UInt8>
        do {
            (header, claims, signature) = try parser.parse(bytes, as: TokenClaims.self)
            let parts = try parser.getTokenParts(bytes)
            signingInput = bytes[..<(parts.header.count + 1 + parts.payload.count)]
        } catch {
            throw .invalid("The token is not a well-formed JSON Web Token.")
        }
        guard header.crit == nil else { throw .invalid("The token has a crit header, which is not supported.") }
        let algorithm = try Self.algorithm(for: header, keys: keys)
        let valid: Bool
        do {
            valid = try algorithm.verify(signature, signs: signingInput)
        } catch {
            valid = false
        }
        guard valid else { throw .invalid("The token's signature does not verify.") }
        return try check(claims, settings: settings, now: now)
    }

    /// The key the header's `alg` (and `kid`) name, whose own algorithm is that `alg`.
    private static func algorithm(for header: JWTHeader, keys: TokenKeys) throws(TokenRejection) -> any JWTAlgorithm {
        guard let alg = header.alg else { throw .invalid("The token has no alg.") }
        if alg == "HS256" {
            guard let hmac = keys.hmac else { throw .invalid("HS256 tokens are not accepted here.") }
            return hmac
        }
        guard TokenKeys.jwksAlgorithms.contains(alg) else {
            throw .invalid("Tokens signed with \(alg) are not accepted.")
        }
        if let kid = header.kid {
            guard let key = keys.byKeyID[kid], key.name == alg else {
                throw .invalid("No \(alg) key has kid \(kid).")
            }
            return key
        }
        let candidates = keys.byKeyID.values.filter { $0.name == alg }
        guard candidates.count == 1 else {
            throw .invalid(candidates.isEmpty ? "No \(alg) key is configured." : "The token names no kid.")
        }
        return candidates[0]
    }

    private static func check(
        _ claims: TokenClaims, settings: TokenSettings, now: Double
    ) throws(TokenRejection) -> VerifiedToken {
        guard let subject = claims.sub?.value, !subject.isEmpty else { throw .invalid("The token has no sub.") }
        guard let expiration = claims.exp else { throw .invalid("The token has no exp.") }
        let leeway = settings.leewaySeconds
        do {
            try expiration.verifyNotExpired(currentDate: Date(timeIntervalSince1970: now - leeway))
        } catch {
            throw .expired
        }
        if let notBefore = claims.nbf {
            do {
                // `nbf` is the first instant the token is valid (RFC 7519 §4.1.5): at it, accept.
                try notBefore.verifyNotBefore(currentDate: Date(timeIntervalSince1970: now + leeway + 0.001))
            } catch {
                throw .invalid("The token is not valid yet (nbf).")
            }
        }
        if let issuer = settings.issuer, claims.iss?.value != issuer {
            throw .invalid("The token's iss is not \(issuer).")
        }
        if let audience = settings.audience {
            do {
                guard let claim = claims.aud else { throw TokenRejection.invalid("") }
                try claim.verifyIntendedAudience(includes: audience)
            } catch {
                throw .invalid("The token's aud does not name \(audience).")
            }
        }
        return VerifiedToken(
            subject: subject, scopes: Scopes(claims.scope?.value ?? ""),
            acceptedUntil: expiration.value.timeIntervalSince1970 + leeway)
    }
}

/// A token as the cache's key, compared byte for byte (a token is ASCII: bytes are what identify it). The hash
/// reads the length and the last 16 bytes, the signature's end, which differ between any two tokens in practice;
/// keys that hash alike are told apart by their bytes. Only tokens whose signature verified are ever stored, so
/// nobody without a signing key can fill the table with keys that collide.
///
/// A stored key owns a copy of the token (``TokenBytes``). A lookup's key borrows the request's bytes: made inside
/// the lock for that one lookup (in `TokenVerifier.verify` of a token's bytes), never stored, so
/// that a cached token costs no copy. Private to this file: `TokenVerifier.verify` is the only maker of either.
///
/// `Sendable` because keys are moved into the verifier's `Mutex`; `@unchecked` for that borrowed pointer: a
/// borrowing key never leaves the call that made it (it is only looked up and removed with, never inserted),
/// and a stored key's bytes are never written once copied.
private enum TokenKey: Hashable, @unchecked Sendable {
    case stored(TokenBytes)
    case borrowed(UnsafeRawBufferPointer)

    private var bytes: UnsafeRawBufferPointer {
        switch self {
        case .stored(let owner): UnsafeRawBufferPointer(owner.bytes)
        case .borrowed(let bytes): bytes
        }
    }

    static func == (lhs: TokenKey, rhs: TokenKey) -> Bool {
        let (left, right) = (lhs.bytes, rhs.bytes)
        return left.count == right.count
            && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
    }

    func hash(into hasher: inout Hasher) {
        let bytes = bytes
        hasher.combine(bytes.count)
        // Two words, not `combine(bytes:)`, whose buffered path does more work on every lookup.
        guard bytes.count >= 16 else { return hasher.combine(bytes: bytes) }
        hasher.combine(bytes.loadUnaligned(fromByteOffset: bytes.count - 16, as: UInt64.self))
        hasher.combine(bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
    }
}

/// A cached token's own copy of its bytes.
private final class TokenBytes: Sendable {
    /// Written once, in `init`; `nonisolated(unsafe)`: a pointer is not `Sendable`, and its bytes are only read.
    nonisolated(unsafe) let bytes: UnsafeMutableRawBufferPointer

    init(_ source: UnsafeRawBufferPointer) {
        bytes = .allocate(byteCount: source.count, alignment: 1)
        bytes.copyMemory(from: source)
    }

    deinit {
        bytes.deallocate()
    }
}

/// The claims Quire reads. jwt-kit's own `verify(using:)` path is not used (``TokenVerifier`` checks
/// the claims synchronously); it refuses, so that this payload can never pass unchecked through it.
struct TokenClaims: JWTPayload {
    var sub: SubjectClaim?
    var exp: ExpirationClaim?
    var nbf: NotBeforeClaim?
    var iat: IssuedAtClaim?
    var iss: IssuerClaim?
    var aud: AudienceClaim?
    var scope: ScopeClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {
        throw JWTError.generic(identifier: "quire", reason: "Quire checks its claims in TokenVerifier")
    }
}

/// The `scope` claim: a space-separated string (RFC 8693 §4.2), or an array of strings as some
/// identity providers send it.
struct ScopeClaim: Codable, Sendable, Equatable {
    var value: String

    init(value: String) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            value = text
        } else {
            value = try container.decode([String].self).joined(separator: " ")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
