import QuireCore
import QuireHTTP

/// `GET /healthz`, `GET /readyz`, and the static files: `GET /openapi.yaml`, the web client and
/// the demo page (``StaticFiles``).
enum OperationsRoutes {
    static let health = PreparedResponse(
        Response(status: 200, headers: noStoreJSON, body: Array(#"{"status":"ok"}"#.utf8)))
    static let ready = PreparedResponse(
        Response(status: 200, headers: noStoreJSON, body: Array(#"{"status":"ready"}"#.utf8)))

    private static let noStoreJSON: HTTPHeaders = [
        "Content-Type": "application/json", "Cache-Control": CachePolicy().headerValue(for: .noStore),
    ]

    /// - Parameter demoPage: whether the demo page and its script and style sheet are served.
    static func add(
        to router: inout Router, readiness: Readiness, replication: ReplicationStatus, cachePolicy: CachePolicy,
        demoPage: Bool = true
    ) {
        StaticFiles.add(to: &router, cachePolicy: cachePolicy, demoPage: demoPage)
        addProbes(to: &router, readiness: readiness, replication: replication)
    }

    /// `GET /healthz` and `GET /readyz`, which the metrics listener serves too.
    static func addProbes(to router: inout Router, readiness: Readiness, replication: ReplicationStatus) {
        router.on("GET", "/healthz") { _, _ in
            .prepared(health)
        }
        router.on("GET", "/readyz") { _, _ in
            switch readiness.state {
            case .ready:
                if replication.isCatchingUp {
                    throw Problem.overloaded(
                        "The service is catching up with the changes of other instances.", retryAfterSeconds: 1)
                }
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
    /// The headers of an answer private to one client (a session's): its `Cache-Control` is already
    /// there, so ``CachePolicy`` adds nothing (and copies nothing) per request.
    static let privateHeaders: HTTPHeaders = ["Content-Type": "application/json", "Cache-Control": "no-store"]
}
