internal import CMicroHTTPD
import Glibc

/// A small blocking HTTP/1.1 client over one TCP connection: keep-alive, `Content-Length` and chunked
/// responses, raw writes for tests that send a request in pieces. Used by `quire health` and the tests.
///
/// Not thread-safe: one connection per thread.
public final class HTTPClientConnection {
    private let socket: Int32
    private var buffer: [UInt8] = []
    private var isOpen = true

    /// Connects to `host:port` (an IP literal or `localhost`); reads and writes time out after `timeout`.
    public init(host: String, port: Int, timeoutSeconds: Double = 10) throws(HTTPClientError) {
        // The socket is set up in a local first: a throw before `self.socket` is set skips `deinit`, so
        // the descriptor is closed exactly once, here. (A close in `deinit` as well would close whatever
        // another thread opened under the same number in between.)
        socket = try Self.connectedSocket(host: host, port: port, timeoutSeconds: timeoutSeconds)
    }

    private static func connectedSocket(host: String, port: Int, timeoutSeconds: Double) throws(HTTPClientError)
        -> Int32
    {
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
