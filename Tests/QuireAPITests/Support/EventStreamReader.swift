import Foundation
import Glibc
import Testing

@testable import QuireHTTP

/// One server-sent event as a client reads it: `id`, `event`, the `data` lines joined, and the comment
/// lines seen before it.
struct ServerSentEvent: Sendable {
    var id: String?
    var event = "message"
    var data = ""
    var comments: [String] = []

    /// The data as a JSON object.
    func object() throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(data.utf8))
        return try #require(value as? [String: Any], "not a JSON object: \(data)")
    }
}

/// A raw-socket reader of one `text/event-stream` response over loopback: reads the head, then
/// decodes the chunked body and splits it into events as they arrive. Non-blocking underneath, so that
/// one thread can watch thousands of them (``EventStreamReader/waitAll(_:until:)``).
final class EventStreamReader {
    let socket: Int32
    private var buffer: [UInt8] = []
    private var body: [UInt8] = []
    private(set) var status = 0
    private(set) var headers: [String: String] = [:]
    private(set) var isClosed = false
    private(set) var events: [ServerSentEvent] = []
    private var pendingComments: [String] = []
    private var headRead = false
    private var bodyEnded = false
    /// The body's decoder when it came with `Content-Encoding: gzip` or `deflate`.
    private var decoder: InflateStream?
    /// Body bytes as they came on the wire, after dechunking and before decoding.
    private(set) var encodedBytes = 0

    /// Connects and sends `GET target`.
    ///
    /// - Parameter receiveBuffer: a small `SO_RCVBUF` (set before connecting) makes a slow reader's
    ///   socket fill up after a few kilobytes.
    init(port: Int, target: String, headers: [(String, String)] = [], receiveBuffer: Int? = nil) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HTTPClientError("socket failed") }
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(socket)
            throw HTTPClientError("connect failed: \(errno)")
        }
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        let sent = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw HTTPClientError("send failed") }
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        Glibc.close(socket)
    }

    func close() {
        shutdown(socket, Int32(SHUT_RDWR))
    }

    /// Reads what has arrived, without blocking.
    func pump() {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !isClosed {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                isClosed = true
            } else {
                if errno != EAGAIN && errno != EWOULDBLOCK { isClosed = true }
                break
            }
        }
        parse()
    }

    /// Waits (up to `seconds`) until `condition` holds; `false` on timeout.
    @discardableResult
    func wait(seconds: Double = 5, until condition: (EventStreamReader) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            pump()
            if condition(self) { return true }
            if isClosed || ContinuousClock.now >= deadline { return condition(self) }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 20)
        }
    }

    /// Waits for the head of the response.
    func readHead(seconds: Double = 5) throws {
        try #require(wait(seconds: seconds) { $0.headRead }, "no response head")
    }

    /// Waits for `count` events in all; returns them.
    @discardableResult
    func waitForEvents(_ count: Int, seconds: Double = 5) -> [ServerSentEvent] {
        wait(seconds: seconds) { $0.events.count >= count }
        return events
    }

    /// Waits until the server ends the body (or closes).
    func waitForEnd(seconds: Double = 5) -> Bool {
        wait(seconds: seconds) { $0.bodyEnded || $0.isClosed }
    }

    /// The comment lines read so far that no event followed.
    var trailingComments: [String] { pendingComments }

    /// Removes and returns the events read so far.
    func takeEvents() -> [ServerSentEvent] {
        defer { events = [] }
        return events
    }

    /// Watches many readers with one `poll`, until each satisfies `condition` or the deadline passes.
    static func waitAll(
        _ readers: [EventStreamReader], seconds: Double, until condition: (EventStreamReader) -> Bool
    ) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var left = readers.filter { !condition($0) }
        while !left.isEmpty && ContinuousClock.now < deadline {
            var descriptors = left.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
            _ = poll(&descriptors, nfds_t(descriptors.count), 20)
            for (index, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
                left[index].pump()
            }
            left.removeAll { condition($0) }
        }
        return left.isEmpty
    }

    private func parse() {
        if !headRead {
            guard let end = find([13, 10, 13, 10], in: buffer, from: 0) else { return }
            let head = String(decoding: buffer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
            status = Int(head[0].split(separator: " ")[1]) ?? 0
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
            buffer.removeFirst(end + 4)
            headRead = true
            switch headers["content-encoding"]?.lowercased() {
            case "gzip": decoder = InflateStream(.gzip)
            case "deflate": decoder = InflateStream(.zlib)
            default: break
            }
        }
        var arrived: [UInt8] = []
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            while let lineEnd = find([13, 10], in: buffer, from: 0) {
                let sizeText = String(decoding: buffer[0..<lineEnd], as: UTF8.self).split(separator: ";")[0]
                guard let size = Int(sizeText, radix: 16) else { break }
                if size == 0 {
                    bodyEnded = true
                    buffer.removeAll()
                    break
                }
                guard buffer.count >= lineEnd + 2 + size + 2 else { break }
                arrived.append(contentsOf: buffer[(lineEnd + 2)..<(lineEnd + 2 + size)])
                buffer.removeFirst(lineEnd + 2 + size + 2)
            }
        } else {
            arrived.append(contentsOf: buffer)
            buffer.removeAll()
        }
        encodedBytes += arrived.count
        if let decoder {
            // Everything decodable so far: a stream compressed with a flush after each event gives each
            // event whole, at once.
            body.append(contentsOf: (try? decoder.decompress(arrived)) ?? [])
        } else {
            body.append(contentsOf: arrived)
        }
        while let end = find([10, 10], in: body, from: 0) {
            let block = String(decoding: body[0..<end], as: UTF8.self)
            body.removeFirst(end + 2)
            var event = ServerSentEvent()
            var data: [String] = []
            var hasField = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") {
                    pendingComments.append(String(line.dropFirst()).trimmingCharacters(in: .whitespaces))
                    continue
                }
                let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0])
                var value = parts.count > 1 ? String(parts[1]) : ""
                if value.hasPrefix(" ") { value.removeFirst() }
                hasField = true
                switch name {
                case "id": event.id = value
                case "event": event.event = value
                case "data": data.append(value)
                default: break
                }
            }
            guard hasField else { continue }
            event.data = data.joined(separator: "\n")
            event.comments = pendingComments
            pendingComments = []
            events.append(event)
        }
    }

    private func find(_ marker: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= marker.count else { return nil }
        var index = start
        while index <= bytes.count - marker.count {
            if bytes[index] == marker[0] && Array(bytes[index..<(index + marker.count)]) == marker { return index }
            index += 1
        }
        return nil
    }
}
