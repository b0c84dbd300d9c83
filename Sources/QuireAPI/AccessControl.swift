import QuireHTTP

/// The bearer tokens: `Authorization: Bearer <token>`, compared in constant time. Writes need the write
/// token when one is configured; with a read token configured, every other `/v1` route needs the read
/// token or the write token. The operations endpoints (`/healthz`, `/readyz`, `/metrics`,
/// `/openapi.yaml`) need neither.
struct TokenAuthorization: Sendable {
    private let writeToken: [UInt8]?
    private let readToken: [UInt8]?

    /// `nil` or empty tokens leave their routes open.
    init(writeToken: String?, readToken: String? = nil) {
        self.writeToken = writeToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.readToken = readToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
    }

    /// - Throws: `401 unauthorized` with `WWW-Authenticate: Bearer` unless the request carries the write
    ///   token (when one is configured).
    func checkWrite(_ request: Request) throws(Problem) {
        guard let writeToken else { return }
        let given = Self.bearer(request)
        guard Self.constantTimeEqual(given ?? [], writeToken) else {
            throw Self.unauthorized(given == nil ? "Writes need Authorization: Bearer <write token>." : nil)
        }
    }

    /// - Throws: `401 unauthorized` unless the request carries the read or the write token (when a read
    ///   token is configured).
    func checkRead(_ request: Request) throws(Problem) {
        guard let readToken else { return }
        let given = Self.bearer(request) ?? []
        let matchesRead = Self.constantTimeEqual(given, readToken)
        let matchesWrite = writeToken.map { Self.constantTimeEqual(given, $0) } ?? false
        guard matchesRead || matchesWrite else {
            throw Self.unauthorized(given.isEmpty ? "Reads need Authorization: Bearer <read token>." : nil)
        }
    }

    private static func unauthorized(_ detail: String?) -> Problem {
        Problem(
            .unauthorized, detail: detail ?? "The bearer token is not valid.",
            headers: ["WWW-Authenticate": #"Bearer realm="quire""#])
    }

    /// The token of `Authorization: Bearer <token>`, or `nil`.
    private static func bearer(_ request: Request) -> [UInt8]? {
        guard let header = request.headers["Authorization"] else { return nil }
        let prefix = "bearer "
        guard header.utf8.count > prefix.utf8.count, header.prefix(prefix.count).lowercased() == prefix else {
            return nil
        }
        return Array(header.utf8.dropFirst(prefix.utf8.count))
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
