import QuireHTTP

/// `GET /healthz`, `GET /readyz` and `GET /openapi.yaml` (API.md §6).
enum OperationsRoutes {
    static let health = PreparedResponse(
        Response(status: 200, headers: JSONResponse.headers, body: Array(#"{"status":"ok"}"#.utf8)))
    static let ready = PreparedResponse(
        Response(status: 200, headers: JSONResponse.headers, body: Array(#"{"status":"ready"}"#.utf8)))

    static let openAPI = PreparedResponse(
        Response(
            status: 200, headers: ["Content-Type": "application/yaml; charset=utf-8"],
            body: Array(OpenAPIDocument.yaml.utf8)))

    static func add(to router: inout Router, readiness: Readiness) {
        router.on("GET", "/openapi.yaml") { _, _ in .prepared(openAPI) }
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
