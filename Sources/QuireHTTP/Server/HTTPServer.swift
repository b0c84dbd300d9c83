internal import CMicroHTTPD
internal import CQuireFraming
internal import CQuireTLS
import Glibc
public import Logging
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: epoll event loops on a pool of threads, keep-alive, whole
/// request bodies within a limit, deferred responses, and a graceful drain.
///
/// ```swift
/// let server = HTTPServer(configuration: configuration, logger: logger, responder: router)
/// try server.start()
/// print(server.port)             // the bound port, also when configured as 0
/// server.shutdown()              // stop accepting, let requests in flight finish, stop
/// ```
///
/// The responder is called on libmicrohttpd's threads, concurrently.
public final class HTTPServer: Sendable {
    public let configuration: Configuration
    /// `configuration.tls != nil`, read on every request (cork): reading the optional would copy the TLS
    /// configuration's strings each time, with a retain and a release of each.
    let servesTLS: Bool
    let logger: Logger
    let responder: any HTTPResponder

    private let lifecycle = Mutex(Lifecycle.idle)
    /// Requests between their first access-handler call and their completion.
    private let requestsInFlight = Atomic<Int>(0)
    /// Set once shutting down: responses then carry `Connection: close`.
    private let isDrainingFlag = Atomic<Bool>(false)
    private let pending = Mutex(PendingRegistry())
    /// Resumes of deferred responses under way, waited for before the daemon stops.
    let resumes = ResumeTracker()
    /// Connections handed to libmicrohttpd and not closed yet: the accepting thread keeps this under
    /// `connectionLimit` (libmicrohttpd's own limit is split between its worker threads, and its count
    /// lags the connections handed to it, so it would refuse some below the limit).
    let openConnections = OpenConnections()
    /// libmicrohttpd's messages, each logged at most once a second (a flood past the connection limit
    /// would otherwise log a line per connection).
    let libraryMessages = Mutex<[String: FailureLog]>([:])
    /// Requests whose framing was refused, by reason, since start (taken only on a refusal).
    private let framingRefusals = Mutex<[FramingRefusal: Int]>([:])
    /// Requests still arriving, cut when they take longer than `requestTimeoutSeconds`.
    let deadlines: RequestDeadlines
    /// HTTPS only: the credentials each new connection is given (replaced by ``reloadCertificate()``).
    let tlsState = Mutex<TLSState?>(nil)
    /// Response body bytes before and after compression (see ``HTTPServer+Encoding.swift``).
    let bodyBytes = BodyByteCounters()

    public init(configuration: Configuration, logger: Logger, responder: any HTTPResponder) {
        self.configuration = configuration
        servesTLS = configuration.tls != nil
        self.logger = logger
        self.responder = responder
        deadlines = RequestDeadlines(timeoutSeconds: configuration.requestTimeoutSeconds, logger: logger)
    }

    /// The port the server listens on (the bound one when configured as 0), or `nil` before `start()`.
    public var port: Int? {
        lifecycle.withLock { state in
            if case .running(_, let acceptor) = state { return acceptor.port }
            return nil
        }
    }

    /// `true` from the start of ``shutdown()`` on: a responder should not defer new requests then.
    public var isDraining: Bool {
        isDrainingFlag.load(ordering: .relaxed)
    }

    /// The number of connections open (accepted, not yet closed), or 0 when the server is not running.
    public var connectionCount: Int {
        lifecycle.withLock { state in
            guard case .running(let daemon, _) = state else { return 0 }
            return Int(quire_mhd_connection_count(daemon.pointer))
        }
    }

    /// Requests refused for their framing (see ``FramingRefusal``), by reason, since start.
    public var framingRefusalCounts: [FramingRefusal: Int] {
        framingRefusals.withLock { $0 }
    }

    func countRefusal(_ refusal: FramingRefusal) {
        framingRefusals.withLock { $0[refusal, default: 0] += 1 }
    }

    /// Requests cut because they did not arrive whole within `requestTimeoutSeconds`, since start.
    public var lateRequestsCut: Int {
        deadlines.cutCount
    }

    /// Connections refused since start: over `connectionLimit` or `perIPConnectionLimit` (closed as
    /// soon as accepted), or refused for want of memory.
    public var refusedConnections: Int {
        lifecycle.withLock { state in
            guard case .running(_, let acceptor) = state else { return 0 }
            return acceptor.refusedCount
        }
    }

    /// The number of requests being handled (received, not yet completely answered).
    public var inFlightCount: Int {
        requestsInFlight.load(ordering: .relaxed)
    }

    /// Binds and starts the event loops.
    ///
    /// - Throws: ``HTTPServerError`` when the configuration is invalid or the address cannot be bound.
    public func start() throws(HTTPServerError) {
        try validate(configuration)
        let address = try SocketAddress(host: configuration.host, port: configuration.port)
        if let tls = configuration.tls {
            try TLSCredentials.checkPriorities(tls.priorities)
            let credentials = try TLSCredentials.load(tls)
            tlsState.withLock {
                $0 = TLSState(configuration: tls, credentials: credentials, ticketKey: TLSTicketKey())
            }
        }
        let port = try lifecycle.withLock { state throws(HTTPServerError) in
            guard case .idle = state else { throw .alreadyStarted }
            let acceptor = try ConnectionAcceptor(
                address: address, host: configuration.host, limit: configuration.connectionLimit,
                noDelay: configuration.tls != nil, open: openConnections, logger: logger)
            let daemon = try startDaemon()
            acceptor.start(handingTo: daemon)
            state = .running(daemon, acceptor)
            deadlines.startWatching()
            return acceptor.port
        }
        logger.info(
            "listening",
            metadata: [
                "host": "\(configuration.host)", "port": "\(port)", "threads": "\(configuration.threads)",
                "scheme": "\(configuration.tls == nil ? "http" : "https")",
            ]
        )
        if let certificate = tlsCertificate {
            logger.info("TLS certificate", metadata: ["certificate": "\(certificate)"])
            for warning in certificate.warnings() { logger.warning("TLS: \(warning)") }
        }
    }

    /// The certificate new HTTPS connections are given, or `nil` when serving plain HTTP.
    public var tlsCertificate: TLSCertificateSummary? {
        tlsState.withLock { $0?.credentials.summary }
    }

    /// Reads the certificate and key files again and gives them to every later handshake; connections
    /// already open keep the certificate they were given. When the new files cannot be used, nothing
    /// changes and the error says why (the previous certificate stays in use).
    ///
    /// - Returns: the certificate now in use.
    /// - Throws: ``HTTPServerError`` naming the file and the reason, or when the server does not serve HTTPS.
    @discardableResult
    public func reloadCertificate() throws(HTTPServerError) -> TLSCertificateSummary {
        guard let tls = tlsState.withLock({ $0?.configuration }) else {
            throw .invalidConfiguration("no TLS certificate to reload: the server serves plain HTTP")
        }
        let credentials = try TLSCredentials.load(tls)
        tlsState.withLock { $0?.credentials = credentials }
        return credentials.summary
    }

    /// Loads and checks a TLS configuration without serving it: what `start()` would refuse, said before.
    ///
    /// - Returns: the certificate's summary (see ``TLSCertificateSummary/warnings(now:)``).
    public static func check(_ tls: TLSConfiguration) throws(HTTPServerError) -> TLSCertificateSummary {
        try TLSCredentials.checkPriorities(tls.priorities)
        return try TLSCredentials.load(tls).summary
    }

    /// Stops gracefully: stops accepting connections, answers every pending (deferred) response with its
    /// shutdown response, lets requests in flight finish for up to `configuration.drainTimeoutSeconds`,
    /// then closes every connection. Safe to call more than once, and from any thread.
    public func shutdown() {
        let running: (DaemonHandle, ConnectionAcceptor)? = lifecycle.withLock { state in
            guard case .running(let daemon, let acceptor) = state else { return nil }
            state = .draining
            return (daemon, acceptor)
        }
        guard let (daemon, acceptor) = running else { return }
        isDrainingFlag.store(true, ordering: .relaxed)
        logger.info("draining", metadata: ["in-flight": "\(inFlightCount)"])

        acceptor.stop()
        let (responses, streams) = pending.withLock { $0.startDraining() }
        for response in responses {
            response.resumeForShutdown()
        }
        for stream in streams {
            stream.finish()  // resumed if suspended; its body ends after what it already gave
        }
        // Done when no connection is left, or no request has been in flight for a quiet period: a
        // request a busy worker thread has not read yet starts within microseconds of that thread
        // freeing up, so the quiet period keeps it from being cut off.
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int(configuration.drainTimeoutSeconds * 1000))
        var quietSince = clock.now
        while clock.now < deadline && quire_mhd_connection_count(daemon.pointer) > 0 {
            if inFlightCount > 0 {
                quietSince = clock.now
            } else if clock.now - quietSince >= .milliseconds(100) {
                break
            }
            usleep(2_000)
        }
        let unfinished = inFlightCount
        deadlines.stopWatching()
        // Every pending response is resolved by now (new ones are answered at once); a resume decided
        // on another thread may not have reached libmicrohttpd yet (microseconds; bounded anyway).
        resumes.waitUntilIdle(logger: logger)
        MHD_stop_daemon(daemon.pointer)
        daemon.releaseContexts()
        lifecycle.withLock { $0 = .stopped }
        logger.info("stopped", metadata: unfinished > 0 ? ["cut-off-requests": "\(unfinished)"] : [:])
    }

    private func validate(_ configuration: Configuration) throws(HTTPServerError) {
        let checks: [(Bool, String)] = [
            (configuration.threads >= 1, "threads must be at least 1"),
            (configuration.connectionLimit >= 1, "connection limit must be at least 1"),
            (configuration.perIPConnectionLimit >= 0, "per-IP connection limit must not be negative"),
            (configuration.connectionTimeoutSeconds >= 1, "connection timeout must be at least 1 second"),
            (configuration.maxBodyBytes >= 0, "maximum body bytes must not be negative"),
            (configuration.connectionMemoryBytes >= 4096, "connection memory must be at least 4096 bytes"),
            (configuration.drainTimeoutSeconds >= 0, "drain timeout must not be negative"),
            (configuration.requestTimeoutSeconds > 0, "request timeout must be positive"),
            ((1...9).contains(configuration.compression.level), "compression level must be from 1 to 9"),
            (configuration.compression.minimumBytes >= 0, "compression minimum bytes must not be negative"),
        ]
        if let failed = checks.first(where: { !$0.0 }) {
            throw .invalidConfiguration(failed.1)
        }
    }

    /// Starts libmicrohttpd without a listening socket of its own: ``ConnectionAcceptor`` hands it
    /// the connections.
    private func startDaemon() throws(HTTPServerError) -> DaemonHandle {
        let contexts = DaemonContexts(server: self)
        var settings = quire_mhd_settings()
        settings.flags = quire_mhd_flags_default
        settings.connection_timeout_seconds = UInt32(configuration.connectionTimeoutSeconds)
        // The accepting thread enforces the limit across all threads; libmicrohttpd's, split between
        // them, is set so that one thread could hold every connection. This is load-bearing: in 0.9.75 a
        // connection handed over by MHD_add_connection that fails the worker's own limit check under
        // its lock returns without unlocking (daemon.c:2784-2797), and that worker deadlocks. Each
        // thread's limit must stay at least the accepting thread's cap, so that check never fails.
        let (product, overflow) = configuration.connectionLimit.multipliedReportingOverflow(by: configuration.threads)
        settings.connection_limit = overflow ? UInt32.max : UInt32(clamping: product)
        settings.per_ip_connection_limit = UInt32(configuration.perIPConnectionLimit)
        settings.connection_memory_limit = configuration.connectionMemoryBytes
        settings.thread_pool_size = UInt32(configuration.threads)
        settings.access_handler = accessHandlerTrampoline
        settings.access_context = contexts.server
        settings.completed_handler = requestCompletedTrampoline
        settings.completed_context = contexts.server
        settings.request_started_handler = requestStartedTrampoline
        settings.request_started_context = contexts.server
        settings.connection_handler = connectionNotifyTrampoline
        settings.connection_context = contexts.server
        settings.logger = contexts.logger
        settings.unescape = quire_unescape
        errno = 0
        let started = withOptionalCString(configuration.tls?.priorities) { priorities in
            settings.tls_priorities = priorities
            settings.tls_certificate_callback = quire_tls_refusing_certificate_callback()
            return quire_mhd_start(&settings)
        }
        guard let daemon = started else {
            let error = errno
            contexts.release()
            throw HTTPServerError.cannotStart(host: configuration.host, port: configuration.port, errno: error)
        }
        return DaemonHandle(pointer: daemon, contexts: contexts)
    }

    // MARK: Pending responses

    /// Registers a deferred response so that shutdown can answer it; `false` when already draining.
    func register(_ response: PendingResponse) -> Bool {
        pending.withLock { $0.insert(response) }
    }

    func unregister(_ response: PendingResponse) {
        pending.withLock { $0.remove(response) }
    }

    /// Registers a streaming response so that shutdown can end it; `false` when already draining.
    func register(_ stream: StreamingResponse) -> Bool {
        pending.withLock { $0.insert(stream) }
    }

    func unregister(_ stream: StreamingResponse) {
        pending.withLock { $0.remove(stream) }
    }

    /// Streaming responses being sent.
    public var streamCount: Int {
        pending.withLock { $0.streamCount }
    }

    func requestStarted() {
        requestsInFlight.add(1, ordering: .relaxed)
    }

    func requestFinished() {
        requestsInFlight.subtract(1, ordering: .relaxed)
    }
}

extension HTTPServer {
    enum Lifecycle {
        case idle
        case running(DaemonHandle, ConnectionAcceptor)
        case draining
        case stopped
    }
}

/// The deferred responses still waiting, the streams being sent, and whether new ones are refused.
struct PendingRegistry {
    private var waiting: [ObjectIdentifier: PendingResponse] = [:]
    private var streams: [ObjectIdentifier: StreamingResponse] = [:]
    private var draining = false

    var streamCount: Int { streams.count }

    mutating func insert(_ stream: StreamingResponse) -> Bool {
        guard !draining else { return false }
        streams[ObjectIdentifier(stream)] = stream
        return true
    }

    mutating func remove(_ stream: StreamingResponse) {
        streams[ObjectIdentifier(stream)] = nil
    }

    mutating func insert(_ response: PendingResponse) -> Bool {
        guard !draining else { return false }
        waiting[ObjectIdentifier(response)] = response
        return true
    }

    mutating func remove(_ response: PendingResponse) {
        waiting[ObjectIdentifier(response)] = nil
    }

    /// Refuses new registrations and returns every waiting response, to be resumed, and every stream,
    /// to be ended.
    mutating func startDraining() -> ([PendingResponse], [StreamingResponse]) {
        draining = true
        return (Array(waiting.values), Array(streams.values))
    }
}

/// The C-side contexts libmicrohttpd holds for the daemon's lifetime: the server, retained, and the
/// logger trampoline's state.
struct DaemonContexts {
    let server: UnsafeMutableRawPointer
    let logger: UnsafeMutablePointer<quire_mhd_logger>

    init(server: HTTPServer) {
        self.server = Unmanaged.passRetained(server).toOpaque()
        logger = .allocate(capacity: 1)
        logger.initialize(to: quire_mhd_logger(callback: libmicrohttpdLogTrampoline, context: self.server))
    }

    func release() {
        logger.deinitialize(count: 1)
        logger.deallocate()
        Unmanaged<HTTPServer>.fromOpaque(server).release()
    }
}

/// A running daemon and the contexts it was given.
///
/// `@unchecked Sendable` is safe: the daemon pointer is used by the accepting thread
/// (`MHD_add_connection`, which libmicrohttpd documents as callable from any thread when the daemon
/// runs its own threads with an inter-thread channel, as ours does), and by `shutdown()`, which takes
/// it out of the server's lifecycle under its lock exactly once and stops the accepting thread before
/// `MHD_stop_daemon`.
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    let contexts: DaemonContexts

    func releaseContexts() {
        contexts.release()
    }
}
