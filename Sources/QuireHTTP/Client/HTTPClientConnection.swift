internal import CMicroHTTPD
internal import CQuireTLS
import Glibc

/// A small blocking HTTP/1.1 client over one TCP connection, in plain HTTP or over TLS: keep-alive,
/// `Content-Length` and chunked responses, raw writes for tests that send a request in pieces. Used by
/// `quire health` and the tests.
///
/// Not thread-safe: one connection per thread.
public final class HTTPClientConnection {
    private let socket: Int32
    private var buffer: [UInt8] = []
    private var isOpen = true
    /// The TLS session over `socket` (HTTPS), or `nil` (plain HTTP).
    private let tls: UnsafeMutablePointer<quire_tls_client>?
    private let timeoutSeconds: Double

    /// Connects to `host:port` (an IP literal or `localhost`); reads and writes time out after `timeout`.
    /// With `tls`, handshakes first and checks the server's certificate (see ``ClientTLS``). With `sourceHost`
    /// (an IP literal of this machine, such as `127.0.0.2`), the connection comes from that address.
    public init(
        host: String, port: Int, timeoutSeconds: Double = 10, tls: ClientTLS? = nil, sourceHost: String? = nil
    ) throws(HTTPClientError) {
        // The socket is set up in a local first: a throw before `self.socket` is set skips `deinit`, so
        // the descriptor is closed exactly once, here. (A close in `deinit` as well would close whatever
        // another thread opened under the same number in between.)
        let socket = try Self.connectedSocket(
            host: host, port: port, timeoutSeconds: timeoutSeconds, sourceHost: sourceHost)
        self.timeoutSeconds = timeoutSeconds
        if let tls {
            do {
                self.tls = try Self.handshake(over: socket, host: host, options: tls)
            } catch {
                Glibc.close(socket)
                throw error
            }
        } else {
            self.tls = nil
        }
        self.socket = socket
    }

    private static func handshake(over socket: Int32, host: String, options: ClientTLS) throws(HTTPClientError)
        -> UnsafeMutablePointer<quire_tls_client>
    {
        let client = UnsafeMutablePointer<quire_tls_client>.allocate(capacity: 1)
        client.initialize(to: quire_tls_client())
        let name = options.serverName ?? (host == "localhost" ? "localhost" : host)
        let isName = (try? SocketAddress(host: name, port: 0)) == nil || name == "localhost"
        var message = [CChar](repeating: 0, count: 512)
        let result = withOptionalCString(options.certificateAuthorityFile) { authority in
            quire_tls_client_start(client, socket, authority, name, isName ? 1 : 0, &message, message.count)
        }
        guard result >= 0 else {
            client.deallocate()
            let detail = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            let reason =
                result == GNUTLS_E_AGAIN
                ? "timed out" : String(cString: gnutls_strerror(result)) + (detail.isEmpty ? "" : ": \(detail)")
            throw HTTPClientError("TLS handshake with \(host): \(reason)")
        }
        return client
    }

    /// The serial number (hexadecimal) of the certificate the server presented, or `nil` over plain HTTP.
    public var peerCertificateSerial: String? {
        guard let tls else { return nil }
        var serial = [CChar](repeating: 0, count: 96)
        quire_tls_client_peer_serial(tls, &serial, serial.count)
        return serial.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// The TLS version negotiated (`TLS1.3`), or `nil` over plain HTTP.
    public var tlsProtocol: String? {
        tls.map { String(cString: quire_tls_client_protocol($0)) }
    }

    private static func connectedSocket(
        host: String, port: Int, timeoutSeconds: Double, sourceHost: String?
    ) throws(HTTPClientError) -> Int32 {
        let address: SocketAddress
        do {
            address = try SocketAddress(host: host, port: port)
        } catch {
            throw HTTPClientError("invalid address \(host):\(port): \(error)")
        }
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let socket = Glibc.socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HTTPClientError.fromErrno("socket") }
        var timeout = timeval(
            tv_sec: Int(timeoutSeconds), tv_usec: Int((timeoutSeconds * 1e6).truncatingRemainder(dividingBy: 1e6)))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var noDelay: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        if let sourceHost {
            let source: SocketAddress
            do {
                source = try SocketAddress(host: sourceHost, port: 0)
            } catch {
                Glibc.close(socket)
                throw HTTPClientError("invalid source address \(sourceHost): \(error)")
            }
            guard source.withSockAddr({ Glibc.bind(socket, $0, source.length) }) == 0 else {
                let error = HTTPClientError.fromErrno("bind to \(sourceHost)")
                Glibc.close(socket)
                throw error
            }
        }
        let connected = address.withSockAddr { Glibc.connect(socket, $0, address.length) }
        guard connected == 0 else {
            let error = HTTPClientError.fromErrno("connect to \(host):\(port)")
            Glibc.close(socket)
            throw error
        }
        return socket
    }

    deinit {
        close()
    }

    public func close() {
        if isOpen {
            isOpen = false
            if let tls {
                quire_tls_client_end(tls)
                tls.deallocate()
            }
            Glibc.close(socket)
        }
    }

    /// Sends a whole request and reads its response.
    ///
    /// - Parameter chunked: send the body with `Transfer-Encoding: chunked` (in chunks of that size)
    ///   instead of `Content-Length`.
    public func request(
        _ method: String,
        _ target: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        chunked chunkSize: Int? = nil
    ) throws(HTTPClientError) -> ClientResponse {
        try write(Self.head(method, target, headers: headers, bodyLength: body?.count, chunked: chunkSize != nil))
        if let body {
            if let chunkSize {
                try writeChunked(body, chunkSize: chunkSize)
            } else {
                try write(body)
            }
        }
        return try readResponse(isHead: method == "HEAD")
    }

    /// The request line and header block of a request (with `Host`, and the body's framing).
    public static func head(
        _ method: String, _ target: String, headers: [(String, String)] = [], bodyLength: Int?, chunked: Bool = false
    ) -> [UInt8] {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if chunked {
            text += "Transfer-Encoding: chunked\r\n"
        } else if let bodyLength {
            text += "Content-Length: \(bodyLength)\r\n"
        }
        return Array((text + "\r\n").utf8)
    }

    /// Writes `body` as chunks of `chunkSize` bytes, then the last chunk.
    public func writeChunked(_ body: [UInt8], chunkSize: Int) throws(HTTPClientError) {
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + max(1, chunkSize))
            try write(Array(String(end - offset, radix: 16).utf8) + [13, 10] + body[offset..<end] + [13, 10])
            offset = end
        }
        try write(Array("0\r\n\r\n".utf8))
    }

    /// Writes raw bytes.
    public func write(_ bytes: [UInt8]) throws(HTTPClientError) {
        var written = 0
        while written < bytes.count {
            if let tls {
                let count = bytes[written...].withUnsafeBytes {
                    gnutls_record_send(tls.pointee.session, $0.baseAddress, $0.count)
                }
                if count == Int(GNUTLS_E_INTERRUPTED) { continue }
                if count == Int(GNUTLS_E_AGAIN) { throw HTTPClientError("timed out sending to the server") }
                if count < 0 { throw HTTPClientError("TLS send: \(String(cString: gnutls_strerror(Int32(count))))") }
                written += count
                continue
            }
            let count = bytes[written...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .fromErrno("send")
            }
            written += count
        }
    }

    /// Reads one response. `isHead`: the response to a `HEAD` request has no body, whatever it declares.
    public func readResponse(isHead: Bool = false) throws(HTTPClientError) -> ClientResponse {
        let headEnd = try readUntil([13, 10, 13, 10])
        let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw HTTPClientError("malformed status line: \(headText.prefix(80))")
        }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimming(" \t"))
        }
        let body: [UInt8]
        if isHead || status == 204 || status == 304 || (100..<200).contains(status) {
            body = []
        } else if headers["Transfer-Encoding"]?.lowercased() == "chunked" {
            body = try readChunkedBody()
        } else if let length = headers["Content-Length"].flatMap({ Int($0) }) {
            try fill(atLeast: length)
            body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            body = try readToEnd()
        }
        return ClientResponse(status: status, headers: headers, body: body)
    }

    /// `true` when the peer has closed the connection (checked without blocking).
    public var isClosedByPeer: Bool {
        if let tls, gnutls_record_check_pending(tls.pointee.session) > 0 { return false }
        var probe: UInt8 = 0
        let count = recv(socket, &probe, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    private func readChunkedBody() throws(HTTPClientError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try readUntil([13, 10])
            let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            buffer.removeFirst(lineEnd + 2)
            guard let size = Int(sizeText.trimming(" "), radix: 16) else {
                throw HTTPClientError("malformed chunk size")
            }
            if size == 0 {
                let trailerEnd = try readUntil([13, 10])
                buffer.removeFirst(trailerEnd + 2)
                return body
            }
            try fill(atLeast: size + 2)
            body += buffer[..<size]
            buffer.removeFirst(size + 2)
        }
    }

    private func readToEnd() throws(HTTPClientError) -> [UInt8] {
        while try receive() > 0 {}
        defer { buffer = [] }
        return buffer
    }

    private func readUntil(_ marker: [UInt8]) throws(HTTPClientError) -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                for start in searchFrom...(buffer.count - marker.count)
                where buffer[start..<start + marker.count].elementsEqual(marker) {
                    return start
                }
                searchFrom = buffer.count - marker.count + 1
            }
            if try receive() == 0 { throw HTTPClientError("connection closed by the server") }
        }
    }

    private func fill(atLeast count: Int) throws(HTTPClientError) {
        while buffer.count < count {
            if try receive() == 0 { throw HTTPClientError("connection closed in the middle of a body") }
        }
    }

    private func receive() throws(HTTPClientError) -> Int {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        let started = ContinuousClock.now
        while let tls {
            let count = chunk.withUnsafeMutableBytes {
                gnutls_record_recv(tls.pointee.session, $0.baseAddress, $0.count)
            }
            if count >= 0 {
                buffer += chunk[..<count]
                return count
            }
            switch Int32(count) {
            case GNUTLS_E_INTERRUPTED: continue
            case GNUTLS_E_AGAIN:
                // Also returned after a post-handshake message (a TLS 1.3 session ticket) with no data yet.
                if ContinuousClock.now - started < .milliseconds(Int(timeoutSeconds * 1000) - 10) { continue }
                throw HTTPClientError("timed out waiting for the server")
            case GNUTLS_E_PREMATURE_TERMINATION: return 0  // closed without close_notify: the end, for HTTP
            default: throw HTTPClientError("TLS receive: \(String(cString: gnutls_strerror(Int32(count))))")
            }
        }
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count >= 0 {
                buffer += chunk[..<count]
                return count
            }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw HTTPClientError("timed out waiting for the server") }
            throw .fromErrno("recv")
        }
    }
}

/// How ``HTTPClientConnection`` speaks TLS: which certificate authorities it trusts, and which name the
/// server's certificate must carry.
public struct ClientTLS: Sendable, Equatable {
    /// A PEM file of trusted certificate authorities; `nil` trusts the system's.
    public var certificateAuthorityFile: String?
    /// The name to send (SNI) and to find in the certificate; `nil`: the host connected to (an IP
    /// address is then checked against the certificate's IP addresses).
    public var serverName: String?

    public init(certificateAuthorityFile: String? = nil, serverName: String? = nil) {
        self.certificateAuthorityFile = certificateAuthorityFile
        self.serverName = serverName
    }
}

/// A response read by ``HTTPClientConnection``.
public struct ClientResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A client-side failure, with a readable description.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }

    static func fromErrno(_ operation: String) -> Self {
        Self("\(operation): \(String(cString: strerror(errno)))")
    }
}

extension StringProtocol {
    /// The text without the leading and trailing characters found in `characters` (spaces, tabs).
    public func trimming(_ characters: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, characters.contains(first) { slice.removeFirst() }
        while let last = slice.last, characters.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
