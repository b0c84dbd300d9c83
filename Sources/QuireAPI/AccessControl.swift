import FoundationEssentials
import QuireAuth
import QuireCore
import QuireHTTP

/// What a route needs of its caller (API.md §5b), declared with the route and checked by
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
        if case .token(let token) = credential { return token.scopes.mayRead(list) }
        return true
    }

    /// Whether the caller's token covers writing `list` (static tokens are checked as tokens, not scopes).
    func mayWrite(_ list: String) -> Bool {
        if case .token(let token) = credential { return token.scopes.mayWrite(list) }
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

/// The one place where requests are admitted to the product routes (API.md §2, §5b): the static bearer
/// tokens (compared in constant time), JSON Web Tokens with their scopes, and the subject a session
/// belongs to.
///
/// - With neither JWT nor a read token configured, reads need no token; with neither JWT nor a write
///   token, writes need none (loopback only: `quire serve` refuses otherwise).
/// - With JWT configured, every `/v1` request needs a token: the write token, the read token, or a JWT.
/// - The operations endpoints (`/healthz`, `/readyz`, `/metrics`, `/openapi.yaml`) need none.
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
            guard caller.mayRead(session.list) else {
                throw deny(.forbidden, "The token may not read the list \(session.list).")
            }
        }
        return caller
    }

    /// The caller's credential; `401` for a bad token, or for none where one is required.
    private func identify(_ request: Request, tokenRequired: Bool) throws(Problem) -> Caller {
        guard let token = Self.bearer(request) else {
            guard !tokenRequired else { throw deny(.invalidToken, "This request needs Authorization: Bearer <token>.") }
            return .anonymous
        }
        if writeToken != nil || readToken != nil {
            let bytes = Array(token.utf8)
            if let writeToken, Self.constantTimeEqual(bytes, writeToken) { return Caller(credential: .writeToken) }
            if let readToken, Self.constantTimeEqual(bytes, readToken) { return Caller(credential: .readToken) }
        }
        if let verifier {
            do throws(TokenRejection) {
                return Caller(credential: .token(try verifier.verify(token)))
            } catch {
                switch error {
                case .expired: throw deny(.expired, "The token has expired.")
                case .invalid(let detail): throw deny(.invalidToken, detail)
                }
            }
        }
        guard !tokenRequired else { throw deny(.invalidToken, "The bearer token is not valid.") }
        return .anonymous
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

    /// The token of `Authorization: Bearer <token>`, or `nil`: a slice of the field, not a copy.
    static func bearer(_ request: Request) -> Substring? {
        // The scheme is case-insensitive (RFC 9110 §11.1), compared as header names are (`utf8.starts(with:)`
        // walked both views through their iterators, about 500 instructions on every request with a token).
        guard let header = request.headers["Authorization"], header.utf8.count > 7,
            HTTPHeaders.startsIgnoringCase(header, with: "Bearer ")
        else { return nil }
        // Past the 7 ASCII bytes by UTF-8 index: `dropFirst(7)` would walk 7 grapheme clusters.
        return header[header.utf8.index(header.utf8.startIndex, offsetBy: 7)...]
    }

    /// Compares every byte whatever the first difference, so the time taken says nothing about the token.
    static func constantTimeEqual(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in 0..<expected.count {
            difference |= (index < given.count ? given[index] : 0) ^ expected[index]
        }
        return difference == 0
    }
}
