import QuireHTTP

/// `GET /healthz` and `GET /readyz` (API.md §6).
enum OperationsRoutes {
    static let health = PreparedResponse(
        Response(status: 200, headers: JSONResponse.headers, body: Array(#"{"status":"ok"}"#.utf8)))
    static let ready = PreparedResponse(
        Response(status: 200, headers: JSONResponse.headers, body: Array(#"{"status":"ready"}"#.utf8)))

    static func add(to router: inout Router, readiness: Readiness) {
        router.on("GET", "/healthz") { _, _ in
            .prepared(health)
        }
        router.on("GET", "/readyz") { _, _ in
            switch readiness.state {
            case .ready:
                return .prepared(ready)
            case .starting:
                throw Problem.overloaded("The service is starting.", retryAfterSeconds: 1)
            case .draining:
                throw Problem.overloaded("The service is shutting down.", retryAfterSeconds: 5)
            }
        }
    }
}

/// Headers shared by every JSON response.
enum JSONResponse {
    static let headers: HTTPHeaders = ["Content-Type": "application/json"]
}
