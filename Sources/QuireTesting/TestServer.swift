public import Logging
public import QuireHTTP

/// A real ``HTTPServer`` on 127.0.0.1 and a port the kernel picked, for tests that speak HTTP over
/// loopback.
public final class TestServer: Sendable {
    public let server: HTTPServer
    public let port: Int

    /// Starts `responder` on port 0 with `configure` applied to a test configuration (2 threads,
    /// short drain).
    public init(
        responder: any HTTPResponder,
        configure: (inout HTTPServer.Configuration) -> Void = { _ in }
    ) throws {
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threads = 2
        configuration.drainTimeoutSeconds = 5
        configure(&configuration)
        server = HTTPServer(configuration: configuration, logger: Self.logger, responder: responder)
        try server.start()
        guard let port = server.port, port > 0 else { throw HTTPClientError.notStarted }
        self.port = port
    }

    /// Wraps a server that is already running (for example a service's).
    public init(running server: HTTPServer) throws {
        self.server = server
        guard let port = server.port, port > 0 else { throw HTTPClientError.notStarted }
        self.port = port
    }

    /// A new keep-alive connection to the server (over TLS with `tls`; from `sourceHost`, a loopback address
    /// such as `127.0.0.2`, when given).
    public func connect(timeoutSeconds: Double = 10, tls: ClientTLS? = nil, sourceHost: String? = nil) throws
        -> HTTPClientConnection
    {
        try HTTPClientConnection(
            host: "127.0.0.1", port: port, timeoutSeconds: timeoutSeconds, tls: tls, sourceHost: sourceHost)
    }

    /// One request on a connection of its own.
    public func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil
    ) throws -> ClientResponse {
        try connect().request(method, target, headers: headers, body: body)
    }

    public func stop() {
        server.shutdown()
    }

    /// Logs of the servers under test: warnings and worse only, on standard error.
    public static let logger: Logger = {
        var logger = Logger(label: "quire-test", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .warning
        return logger
    }()
}

extension HTTPClientError {
    static var notStarted: HTTPClientError {
        HTTPClientError("the test server did not report a bound port")
    }
}
