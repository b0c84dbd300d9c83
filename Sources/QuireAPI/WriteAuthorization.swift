import QuireHTTP

/// The write token check: `Authorization: Bearer <token>`, compared in constant time.
struct WriteAuthorization: Sendable {
    private let token: [UInt8]?

    /// `nil` or empty: writes are open.
    init(token: String?) {
        self.token = token.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
    }

    /// - Throws: `401 unauthorized` with `WWW-Authenticate: Bearer` when a token is configured and the
    ///   request does not carry it.
    func check(_ request: Request) throws(Problem) {
        guard let token else { return }
        let header = request.headers["Authorization"] ?? ""
        let prefix = "bearer "
        let given: [UInt8] =
            header.count > prefix.count && header.prefix(prefix.count).lowercased() == prefix
            ? Array(header.utf8.dropFirst(prefix.utf8.count)) : []
        guard Self.constantTimeEqual(given, token) else {
            throw Problem(
                .unauthorized,
                detail: header.isEmpty
                    ? "Writes need Authorization: Bearer <token>." : "The bearer token is not valid.",
                headers: ["WWW-Authenticate": #"Bearer realm="quire""#])
        }
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
