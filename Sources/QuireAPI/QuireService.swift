public import Logging
public import QuireHTTP

/// The Quire HTTP service: every route of API.md over one ``HTTPServer``.
///
/// Built once at start-up; its responder is immutable and shared by libmicrohttpd's threads.
public final class QuireService: Sendable {
    public let server: HTTPServer
    public let readiness: Readiness
    public let router: RouterResponder
    /// Every `(method, pattern)` the service answers, for the OpenAPI check.
    public let routes: [(method: String, pattern: String)]

    public init(configuration: Configuration, logger: Logger) {
        let readiness = Readiness()
        var router = Router()
        OperationsRoutes.add(to: &router, readiness: readiness)
        self.readiness = readiness
        self.routes = router.routeList
        self.router = router.buildResponder(logger: logger)
        self.server = HTTPServer(configuration: configuration.http, logger: logger, responder: self.router)
    }

    /// Starts listening; `/readyz` answers `200` from then on.
    public func start() throws(HTTPServerError) {
        try server.start()
        readiness.set(.ready)
    }

    /// Graceful shutdown: `/readyz` answers `503`, in-flight requests finish, then the server stops.
    public func shutdown() {
        readiness.set(.draining)
        server.shutdown()
    }
}

extension QuireService {
    /// Everything the service is configured with.
    public struct Configuration: Sendable, Equatable {
        public var http = HTTPServer.Configuration()
        /// The token producers send as `Authorization: Bearer <token>`; `nil` leaves writes open.
        public var writeToken: String?

        public init() {}
    }
}
