import FoundationEssentials
import QuireAuth
import QuireCore
import QuireHTTP

/// What a route needs of its caller (openapi.yaml), declared with the route and checked by
/// ``AccessControl`` before the handler runs.
enum RouteAccess: Sendable {
    /// `GET /v1/lists`: a token when tokens are required; the handler shows only what it may read.
    case listIndex
    /// The route's `{list}` is read (pages, session creation): `read:` on it.
    case readList
    /// The route's `{list}` is written: the write token or `write:` on it.
    case writeList
    /// The route's session `{id}`: it must belong to the caller's subject (else `404 session-not-found`),
    /// and the caller must still read its list.
    case session
}

/// Who is calling, as far as access goes.
struct Caller: Sendable {
    enum Credential: Sendable {
        /// No token (on a route that needs none).
        case none
        /// The static `auth.writeToken`: every list, read and write.
        case writeToken
        /// The static `auth.readToken`: every list, read only.
        case readToken
        /// A verified JSON Web Token.
        case token(VerifiedToken)
    }

    let credential: Credential

    static let anonymous = Caller(credential: .none)

    /// The `sub` of the caller's token; `nil` without a JSON Web Token. Sessions record it.
    var subject: String? {
        if case .token(let token) = credential { return token.subject }
        return nil
    }

    /// When the caller's token stops being accepted, in seconds since 1970; `nil` for none. A request
    /// that outlives its token ends then: a long poll with `401`, an event stream closed by the streams'
    /// ticker (without `event: gone`: the session lives on, and its client reconnects with a fresh token).
    var acceptedUntil: Double? {
        if case .token(let token) = credential { return token.acceptedUntil }
        return nil
    }

    /// Whether the caller's access depends on the list: only a JSON Web Token's scopes name lists.
    var isScoped: Bool {
        if case .token = credential { return true }
        return false
    }

    /// Whether the caller may read `list` (a route's access check has already admitted it to the route).
    func mayRead(_ list: String) -> Bool {
        if case .token(let token) = credential { return token.mayRead(list) }
        return true
    }

    /// The lists the caller may read, for a listing: every list, or the names and prefixes of a JSON Web Token's
    /// `read:` scopes. A pattern with a character no list name has (``PlainName``) covers no list and is left
    /// out, so that only plain names reach the store's queries.
    ///
    /// - Complexity: O(*p* log *p*) for *p* `read:` patterns.
    var readableLists: ListSelection {
        guard case .token(let token) = credential else { return .all }
        let (names, prefixes) = token.readPatterns
        return ListSelection(
            prefixes: prefixes.filter { $0.isEmpty || PlainName.isValid($0) }, names: names.filter(PlainName.isValid))
    }

    /// Whether the caller's token covers writing `list` (static tokens are checked as tokens, not scopes).
    func mayWrite(_ list: String) -> Bool {
        if case .token(let token) = credential { return token.mayWrite(list) }
        return true
    }
}

/// Denials, by the reason counted in `quire_auth_denials_total{reason}`.
enum DenialReason: String, Sendable, CaseIterable {
    /// A missing or bad token where one is required.
    case invalidToken = "invalid_token"
    /// A token past its `exp`.
    case expired
    /// A valid token whose scopes do not cover the list.
    case forbidden
    /// A session of another subject (answered as `404 session-not-found`).
    case sessionSubject = "session_subject"
}

/// The one place where requests are admitted to the product routes (openapi.yaml): the static bearer
/// tokens (compared in constant time), JSON Web Tokens with their scopes, and the subject a session
/// belongs to.
///
/// - With neither JWT nor a read token configured, reads need no token; with neither JWT nor a write
///   token, writes need none (loopback only: `quire serve` refuses otherwise).
/// - With JWT configured, every `/v1` request needs a token: the write token, the read token, or a JWT.
/// - The operations endpoints (`/healthz`, `/readyz`, `/openapi.yaml`) need none; `/metrics` checks its own token
///   (``APIContext/metrics(_:access:)``).
final class AccessControl: Sendable {
    private let writeToken: [UInt8]?
    private let readToken: [UInt8]?
    let verifier: TokenVerifier?
    private let sessions: SessionStore
    /// The service's readiness: nothing is admitted while it starts (see ``admit(_:_:_:)``).
    private let readiness: Readiness
    private let denied: @Sendable (DenialReason) -> Void

    /// - Parameters:
    ///   - writeToken, readToken: `nil` or empty leave their routes open (unless JWT is configured).
    ///   - denied: told of every denial, for the metrics.
    init(
        writeToken: String?, readToken: String?, verifier: TokenVerifier?, sessions: SessionStore,
        readiness: Readiness, denied: @escaping @Sendable (DenialReason) -> Void = { _ in }
    ) {
        self.readiness = readiness
        self.writeToken = writeToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.readToken = readToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.verifier = verifier
        self.sessions = sessions
        self.denied = denied
    }

    private var readsNeedToken: Bool { readToken != nil || verifier != nil }
    private var writesNeedToken: Bool { writeToken != nil || verifier != nil }

    /// Admits `request` to a route that needs `access`, or throws its problem: `401 unauthorized`,
    /// `403 forbidden`, or `404 session-not-found` for another subject's session.
    func admit(_ request: Request, _ access: RouteAccess, _ parameters: RouteParameters) throws(Problem) -> Caller {
        if readiness.state == .starting {
            // Before the stored lists are loaded, a list is neither missing (404) nor new (a PUT would replace
            // the stored one as if it were): nothing is answered from or written to a registry still empty.
            throw Problem.overloaded(
                "The service is starting: its lists are loading. Retry shortly.", retryAfterSeconds: 1)
        }
        let writes = access == .writeList
        let caller = try identify(request, tokenRequired: writes ? writesNeedToken : readsNeedToken)
        switch access {
        case .listIndex:
            break
        case .readList:
            guard caller.isScoped else { break }  // reads every list: no name looked up
            let list = parameters["list"] ?? ""
            guard caller.mayRead(list) else { throw deny(.forbidden, "The token may not read the list \(list).") }
        case .writeList:
            if case .readToken = caller.credential, writesNeedToken {
                throw deny(.invalidToken, "The read token does not allow writes.")
            }
            let list = parameters["list"] ?? ""
            guard caller.mayWrite(list) else { throw deny(.forbidden, "The token may not write the list \(list).") }
        case .session:
            // Without JWT no session has a subject and every caller reads every list: nothing to look up.
            guard verifier != nil else { break }
            let id = parameters["id"] ?? ""
            // An unknown session is left to the route, which answers 404 as for anyone.
            guard let key = SessionKey(validating: id), let session = sessions.session(key) else { break }
            guard session.subject == caller.subject else {
                denied(.sessionSubject)
                throw APIContext.sessionNotFound
            }
            guard caller.mayRead(ViewName.list(of: session.list)) else {
                throw deny(.forbidden, "The token may not read the list \(ViewName.list(of: session.list)).")
            }
        }
        return caller
    }

    /// The caller's credential; `401` for a bad token, or for none where one is required.
    private func identify(_ request: Request, tokenRequired: Bool) throws(Problem) -> Caller {
        // The field's bytes, in the request's buffer: a token is never decoded into a string unless it is new.
        let identified = request.headers.withValue(of: "Authorization") { field in
            Self.bearer(field).map { identify(token: $0) }
        }
        switch identified ?? nil {
        case nil:
            guard !tokenRequired else { throw deny(.invalidToken, "This request needs Authorization: Bearer <token>.") }
            return .anonymous
        case .caller(let caller):
            return caller
        case .rejected(.expired):
            throw deny(.expired, "The token has expired.")
        case .rejected(.invalid(let detail)):
            throw deny(.invalidToken, detail)
        case .unknown:
            guard !tokenRequired else { throw deny(.invalidToken, "The bearer token is not valid.") }
            return .anonymous
        }
    }

    /// What a bearer token is.
    private enum Identification {
        case caller(Caller)
        /// A JSON Web Token that did not verify.
        case rejected(TokenRejection)
        /// Neither static token, and no JSON Web Token is configured.
        case unknown
    }

    private func identify(token: UnsafeRawBufferPointer) -> Identification {
        if let writeToken, Self.constantTimeEqual(token, writeToken) { return .caller(Caller(credential: .writeToken)) }
        if let readToken, Self.constantTimeEqual(token, readToken) { return .caller(Caller(credential: .readToken)) }
        guard let verifier else { return .unknown }
        do throws(TokenRejection) {
            return .caller(Caller(credential: .token(try verifier.verify(token))))
        } catch {
            return .rejected(error)
        }
    }

    /// Counts the denial and makes its problem document.
    func deny(_ reason: DenialReason, _ detail: String) -> Problem {
        denied(reason)
        return reason == .forbidden ? Problem(.forbidden, detail: detail) : Self.unauthorized(detail)
    }

    /// `401 unauthorized` with `WWW-Authenticate: Bearer realm="quire", error="invalid_token"`.
    static func unauthorized(_ detail: String) -> Problem {
        Problem(
            .unauthorized, detail: detail,
            headers: ["WWW-Authenticate": #"Bearer realm="quire", error="invalid_token""#])
    }

    /// The token of an `Authorization: Bearer <token>` field's bytes, or `nil`: a slice of them, not a copy. The
    /// scheme is case-insensitive (RFC 9110 §11.1).
    static func bearer(_ field: UnsafeBufferPointer<UInt8>) -> UnsafeRawBufferPointer? {
        // Byte by byte, unrolled: a loop over the scheme's `utf8.enumerated()` would cost an iterator per request.
        // `| 0x20` lowers a letter (and makes no other byte one); the space is compared as it is.
        func letter(_ index: Int, _ lower: Unicode.Scalar) -> Bool { field[index] | 0x20 == UInt8(ascii: lower) }
        guard field.count > 7, letter(0, "b"), letter(1, "e"), letter(2, "a"), letter(3, "r"), letter(4, "e"),
            letter(5, "r"), field[6] == UInt8(ascii: " ")
        else { return nil }
        return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(field)[7...])
    }

    /// Compares every byte whatever the first difference, so the time taken says nothing about the token.
    static func constantTimeEqual(_ given: UnsafeRawBufferPointer, _ expected: [UInt8]) -> Bool {
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in 0..<expected.count {
            difference |= (index < given.count ? given[index] : 0) ^ expected[index]
        }
        return difference == 0
    }
}
