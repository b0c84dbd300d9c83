internal import CMicroHTTPD
import Glibc
import Logging
import Synchronization

/// The listening socket, and the thread that accepts connections on it and hands each one to
/// libmicrohttpd (`MHD_add_connection`), which runs it on one of its worker threads from then on.
///
/// libmicrohttpd could listen itself, but then the only way to stop accepting during a graceful drain
/// is `MHD_quiesce_daemon`, and in 0.9.75 (Debian bookworm's) that races with the daemon's own worker
/// threads: both remove the listening socket from a worker's epoll set, and when the worker is first,
/// the quiescing thread panics ("Failed to remove listen FD from epoll set", daemon.c:5531) and the
/// process aborts. Owning the socket makes stopping a plain matter of this thread: it is woken, it
/// returns, then the socket is closed; libmicrohttpd never touches a listening socket.
///
/// Past the connection limit (counted here, across all of libmicrohttpd's threads) or the per-IP limit
/// (libmicrohttpd's), a connection is closed at once, so a client over a limit learns it right away
/// instead of waiting in the kernel's queue.
final class ConnectionAcceptor: Sendable {
    /// The port the socket is bound to (the kernel's pick when asked for 0).
    let port: Int
    private let listenSocket: Int32
    /// A pipe: a byte written makes the thread return.
    private let wakeupReader: Int32
    private let wakeupWriter: Int32
    private let logger: Logger
    private let thread = Mutex<DetachedThread.Joinable?>(nil)
    private let state = Mutex(LifecycleState.bound)
    private let failures = Mutex(FailureLog())
    private let refused = Atomic<Int>(0)
    private let limit: Int
    /// The server's count of open connections: raised here for each one handed over, lowered by
    /// libmicrohttpd's close notification.
    private let open: OpenConnections
    /// Set `TCP_NODELAY` on each connection before handing it over (TLS: see `init`).
    private let noDelay: Bool

    private enum LifecycleState { case bound, accepting, stopped }

    /// Binds and listens on `address` (non-blocking, `SO_REUSEADDR`, IPv6 only for an IPv6 address).
    ///
    /// - Parameter noDelay: set `TCP_NODELAY` on every accepted connection. Over TLS the handshake is
    ///   written by GnuTLS in several small sends that libmicrohttpd's own Nagle handling does not see: with
    ///   Nagle's algorithm on, the later ones wait for the client's delayed ACK (40 ms a handshake here).
    init(address: SocketAddress, host: String, limit: Int, noDelay: Bool, open: OpenConnections, logger: Logger)
        throws(HTTPServerError)
    {
        let requestedPort = address.port
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let socket = Glibc.socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw .cannotStart(host: host, port: requestedPort, errno: errno) }
        Self.setNonBlockingAndCloseOnExec(socket)
        var on: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if address.isIPv6 {
            setsockopt(socket, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = address.withSockAddr { Glibc.bind(socket, $0, address.length) }
        guard bound == 0, Glibc.listen(socket, SOMAXCONN) == 0 else {
            let error = errno
            Glibc.close(socket)
            throw .cannotStart(host: host, port: requestedPort, errno: error)
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            let error = errno
            Glibc.close(socket)
            throw .cannotStart(host: host, port: requestedPort, errno: error)
        }
        pipeEnds.forEach(Self.setNonBlockingAndCloseOnExec)
        listenSocket = socket
        self.limit = limit
        self.noDelay = noDelay
        self.open = open
        wakeupReader = pipeEnds[0]
        wakeupWriter = pipeEnds[1]
        self.logger = logger
        port = Self.boundPort(of: socket) ?? requestedPort
    }

    deinit {
        // Only reached without `stop()` when the daemon failed to start: nothing else holds these.
        if state.withLock({ $0 }) != .stopped {
            closeDescriptors()
        }
    }

    /// Connections libmicrohttpd refused when handed them (over the connection or per-IP limit, or out
    /// of memory), since start.
    var refusedCount: Int { refused.load(ordering: .relaxed) }

    /// Starts the accepting thread: from now on each connection goes to `daemon`.
    ///
    /// - Precondition: `daemon` stays running until ``stop()`` has returned.
    func start(handingTo daemon: DaemonHandle) {
        state.withLock { state in
            guard state == .bound else { return }
            state = .accepting
            thread.withLock { $0 = DetachedThread.startJoinable { [self] in run(daemon) } }
        }
    }

    /// Stops accepting: wakes the thread, waits for it, then closes the socket (connections still in
    /// the kernel's queue are reset, later ones refused). Safe to call more than once.
    func stop() {
        let wasAccepting: Bool? = state.withLock { state in
            defer { state = .stopped }
            switch state {
            case .bound: return false
            case .accepting: return true
            case .stopped: return nil
            }
        }
        guard let wasAccepting else { return }
        if wasAccepting {
            var byte: UInt8 = 1
            _ = Glibc.write(wakeupWriter, &byte, 1)
            thread.withLock { $0 }?.join()
        }
        closeDescriptors()
    }

    private func closeDescriptors() {
        for descriptor in [listenSocket, wakeupReader, wakeupWriter] { Glibc.close(descriptor) }
    }

    private func run(_ daemon: DaemonHandle) {
        var descriptors = [
            pollfd(fd: listenSocket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeupReader, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 {
                if errno != EINTR { noteFailure("poll", errno: errno, pause: true) }
                continue
            }
            if descriptors[1].revents != 0 { return }
            if descriptors[0].revents != 0 { acceptPending(into: daemon) }
        }
    }

    /// Accepts the connections waiting in the kernel's queue, at most 64 before polling again, so that
    /// a flood of connections cannot keep ``stop()`` waiting.
    private func acceptPending(into daemon: DaemonHandle) {
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            // Non-blocking and close-on-exec from the start (`quire_accept`): fewer `fcntl` calls.
            let client = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    quire_accept(listenSocket, address, &length)
                }
            }
            guard client >= 0 else {
                switch errno {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case let error:
                    // Out of descriptors or memory: the connection stays queued; pause rather than spin.
                    noteFailure("accept", errno: error, pause: true)
                    return
                }
            }
            guard open.admit(limit: limit) else {
                refused.add(1, ordering: .relaxed)  // counted before the client can see the close
                Glibc.close(client)
                continue
            }
            // libmicrohttpd owns the socket from here, and closes it itself when it refuses it (over the
            // per-IP limit, or out of memory).
            if noDelay {
                var on: Int32 = 1
                setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            }
            let added = withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    MHD_add_connection(daemon.pointer, client, address, length)
                }
            }
            if added != .YES {
                refused.add(1, ordering: .relaxed)
                open.closed()  // refused without a connection, so without a close notification
            }
        }
    }

    /// Logs a failure of the accepting thread at most once a second, and optionally pauses it briefly.
    private func noteFailure(_ call: String, errno error: Int32, pause: Bool) {
        let suppressed = failures.withLock { $0.record(now: .now) }
        if let suppressed {
            logger.error(
                "cannot accept connections",
                metadata: [
                    "call": "\(call)", "error": "\(String(cString: strerror(error)))",
                    "suppressed": "\(suppressed)",
                ])
        }
        if pause { usleep(10_000) }
    }

    private static func setNonBlockingAndCloseOnExec(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    private static func boundPort(of socket: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard named == 0 else { return nil }
        return SocketAddress(storage)?.port
    }
}

/// The connections handed to libmicrohttpd and not closed yet, across all its threads.
///
/// Known drift: a connection libmicrohttpd drops after accepting it from `MHD_add_connection` for want
/// of memory (its pool cannot be allocated) gets no close notification, so it stays counted.
final class OpenConnections: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts one more connection when fewer than `limit` are open; `false` (nothing counted) otherwise.
    /// Only the accepting thread admits, so the check and the increment need no loop.
    func admit(limit: Int) -> Bool {
        guard count.load(ordering: .relaxed) < limit else { return false }
        count.add(1, ordering: .relaxed)
        return true
    }

    /// One connection fewer (closed, or refused by libmicrohttpd after it was admitted).
    func closed() {
        count.subtract(1, ordering: .relaxed)
    }
}

/// At most one log line a second for a repeating message, with the count of those not logged.
struct FailureLog {
    private var lastLogged: ContinuousClock.Instant?
    private var suppressed = 0

    /// The number suppressed since the last line when this one should be logged, else `nil`.
    mutating func record(now: ContinuousClock.Instant) -> Int? {
        if let lastLogged, now - lastLogged < .seconds(1) {
            suppressed += 1
            return nil
        }
        lastLogged = now
        defer { suppressed = 0 }
        return suppressed
    }
}
