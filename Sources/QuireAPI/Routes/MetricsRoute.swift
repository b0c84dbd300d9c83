import QuireHTTP

/// `GET /metrics`: the Prometheus text exposition format (version 0.0.4), to the callers its listener's
/// ``QuireService/MetricsAccess`` lets in.
extension APIContext {
    /// - Throws: `401 unauthorized` (with `WWW-Authenticate`) for a request without the metrics token where one is
    ///   needed, and for every request where `/metrics` is refused.
    func metrics(_ request: Request, access: QuireService.MetricsAccess) throws(Problem) -> Reply {
        switch access {
        case .open:
            break
        case .token(let token):
            let expected = Array(token.utf8)
            let admitted =
                request.headers.withValue(of: "Authorization") { field in
                    AccessControl.bearer(field).map { AccessControl.constantTimeEqual($0, expected) } ?? false
                } ?? false
            guard admitted else {
                throw self.access.deny(.invalidToken, "GET /metrics needs Authorization: Bearer <auth.metricsToken>.")
            }
        case .refused:
            throw self.access.deny(
                .invalidToken,
                "GET /metrics is not served to the network without a token: set auth.metricsToken and scrape with "
                    + "it, or scrape server.metricsListener.")
        }
        return .response(
            Response(
                status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                body: serviceMetrics.scrape(self)))
    }
}
