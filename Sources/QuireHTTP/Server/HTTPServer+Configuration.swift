import Glibc

extension HTTPServer {
    /// How the server listens and what it accepts. Every limit holds for every request, whatever its route.
    public struct Configuration: Sendable, Equatable {
        /// The address to bind: an IPv4 or IPv6 literal, or `localhost`. Default `127.0.0.1`.
        public var host: String = "127.0.0.1"
        /// The port; `0` binds any free port, readable afterwards from ``HTTPServer/port``. Default `8080`.
        public var port: Int = 8080
        /// libmicrohttpd's worker threads (epoll, one event loop each). Default: the number of cores.
        public var threads: Int = Configuration.coreCount
        /// Connections open at once (long polls included); beyond it new connections are refused.
        /// libmicrohttpd splits it evenly between the worker threads. Default `10000`.
        public var connectionLimit: Int = 10_000
        /// Connections open at once from one IP address; `0` means no limit. Default `0`.
        public var perIPConnectionLimit: Int = 0
        /// Seconds of inactivity after which a connection is closed (a trickling client included).
        /// Default `30`.
        public var connectionTimeoutSeconds: Int = 30
        /// Seconds a request may take to arrive whole (request line, headers and body): a client that
        /// trickles it slower is cut, however steadily it sends. Default `30`.
        public var requestTimeoutSeconds: Double = 30
        /// The largest request body accepted; larger ones get `413`. Default 1 MiB.
        public var maxBodyBytes: Int = 1 << 20
        /// Memory per connection for reading the request line and headers: also the largest header
        /// block accepted (`431` beyond it; about 15 KB of fields fit in the default). libmicrohttpd
        /// zeroes it for every request on a connection and it stays resident while the connection is
        /// open (an idle event stream), so more costs throughput and memory. Default 16 KiB: half of
        /// libmicrohttpd's own default, which serves more reads a second (`scripts/bench.py http`, see
        /// docs/performance.md), and still above what nginx (8 KB per line) and Apache (8 KB per field)
        /// take by default.
        public var connectionMemoryBytes: Int = 16 << 10
        /// How long a graceful shutdown lets requests in flight finish. Default `10` seconds.
        public var drainTimeoutSeconds: Double = 10
        /// Response compression (`Accept-Encoding`). Default: on, gzip and deflate, from 1 KiB, level 6.
        public var compression = CompressionSettings()
        /// HTTPS with this certificate, key and priorities; `nil` serves plain HTTP. Default `nil`.
        public var tls: TLSConfiguration?

        public init() {}

        /// Whether ``host`` is a loopback address (127.0.0.0/8, `::1`, `localhost`), which only this machine can
        /// reach: what decides the defaults that keep a server open to the network safe. `false` for a host that
        /// is not an address.
        public var bindsLoopback: Bool {
            (try? SocketAddress(host: host, port: 0))?.isLoopback ?? false
        }

        /// The number of cores online, at least 1.
        public static var coreCount: Int {
            max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        }
    }

    /// How responses are compressed (RFC 9110 §12.5.3 negotiation, in ``HTTPServer``).
    public struct CompressionSettings: Sendable, Equatable {
        /// Compress responses for clients that accept gzip or deflate. Default `true`.
        public var enabled = true
        /// Bodies smaller than this are sent as they are (compression would gain little). Default 1024.
        public var minimumBytes = 1024
        /// zlib's level, 1 (fastest) to 9 (smallest). Default 6.
        public var level = 6

        public init() {}
    }
}
