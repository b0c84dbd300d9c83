internal import CMicroHTTPD
import Glibc
import Synchronization

/// A response whose body is produced piece by piece while the connection stays open (server-sent
/// events): libmicrohttpd asks for the next piece whenever it has room to send one, and while there is
/// nothing to send the connection is suspended and holds no thread. ``wake()``, from any thread, resumes
/// it: libmicrohttpd then asks the producer again.
///
/// The producer is called on the connection's libmicrohttpd thread, one call at a time. It is asked only
/// when everything it gave before has been handed to the socket, so a client that reads slowly is asked
/// less often: whatever the producer sums up since its last piece is one piece, never a backlog.
///
/// On shutdown the server ends every stream (``finish()``): the producer is not asked again, what it
/// gave is sent, then the body ends (the last chunk), and the connection is never left suspended.
public final class StreamingResponse: Sendable {
    /// What the producer gives when asked.
    public enum Next: Sendable {
        /// Send these bytes (then ask again).
        case send([UInt8])
        /// Nothing to send now: suspend until ``StreamingResponse/wake()``.
        case wait
        /// End the body.
        case end
    }

    public let status: Int
    public let headers: HTTPHeaders
    private let produce: @Sendable () -> Next
    private let machine = Mutex(StreamStateMachine())
    /// Bytes given by the producer and not yet copied into libmicrohttpd's buffer (connection thread only;
    /// a lock that is never contended, so that the type needs no unchecked promise).
    private let unsent = Mutex(UnsentBytes())
    /// Connection thread only, as `unsent`.
    private let encoding = Mutex(Encoding())
    private let onEnd = Mutex<(@Sendable () -> Void)?>(nil)
    /// Fields added after the stream was made, sent with `headers` (see ``addFields(_:)``).
    private let addedFields = Mutex(HTTPHeaders())

    /// - Parameters:
    ///   - headers: sent with the status; the body has no length (chunked over HTTP/1.1).
    ///   - produce: gives the next piece of the body; see ``Next``.
    public init(status: Int = 200, headers: HTTPHeaders, produce: @escaping @Sendable () -> Next) {
        self.status = status
        self.headers = headers
        self.produce = produce
    }

    /// Adds `fields` to those sent with the status: called by the responder that made the stream, before the
    /// server sends its status.
    public func addFields(_ fields: HTTPHeaders) {
        addedFields.withLock { added in
            for field in fields { added.add(field.name, field.value) }
        }
    }

    /// Asks the producer again soon: resumes the connection if it is suspended, else makes the producer's
    /// next `.wait` ask once more. Callable from any thread, any number of times.
    public func wake() {
        let action = machine.withLock { machine in
            let action = machine.wake()
            if case .resume(let connection) = action { connection.resumes?.begin() }
            return action
        }
        if case .resume(let connection) = action {
            MHD_resume_connection(connection.pointer)
            connection.resumes?.end()
        }
    }

    /// Ends the stream after what the producer already gave: it is not asked again.
    public func finish() {
        machine.withLock { $0.finish() }
        wake()
    }

    /// Calls `action` once, when the request is over (the body ended, the client went away, or the server
    /// stopped); at once if it already is.
    public func whenEnded(_ action: @escaping @Sendable () -> Void) {
        let ended = machine.withLock { $0.isEnded }
        if ended {
            action()
            return
        }
        onEnd.withLock { $0 = action }
        if machine.withLock({ $0.isEnded }), let action = onEnd.withLock({ $0.take() }) { action() }
    }

    /// `true` once the request is over.
    public var isEnded: Bool { machine.withLock { $0.isEnded } }

    // MARK: Used by the server, on the connection's libmicrohttpd thread

    /// Called before the response is queued.
    func attach(to connection: ConnectionHandle) {
        machine.withLock { $0.attach(to: connection) }
    }

    /// Called when the request ended, whatever the reason: nothing may touch the connection afterwards.
    func requestEnded() {
        machine.withLock { $0.end() }
        if let action = onEnd.withLock({ $0.take() }) { action() }
    }

    /// Sends the body in `coding` (gzip or deflate), piece by piece; called by the server before the
    /// response is queued, when the client accepts it.
    func encode(as coding: ContentCoding, level: Int) {
        guard coding != .identity else { return }
        encoding.withLock { $0.encoder = DeflateStream(coding: coding, level: level) }
    }

    /// The end of the body: first the coding's trailer, if there is one and it was not given yet (then
    /// `nil`: copy it out before ending).
    private func endOfStream() -> Int? {
        let trailer = encoding.withLock { encoding -> [UInt8]? in
            guard let encoder = encoding.encoder, !encoding.trailerGiven else { return nil }
            encoding.trailerGiven = true
            return encoder.finish()
        }
        guard let trailer else { return Int(MHD_CONTENT_READER_END_OF_STREAM) }
        unsent.withLock { $0.set(trailer) }
        return nil
    }

    /// libmicrohttpd's content reader: up to `capacity` bytes into `buffer`; 0 after suspending the
    /// connection; `MHD_CONTENT_READER_END_OF_STREAM` at the end.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        while true {
            let copied = unsent.withLock { $0.copy(into: buffer, capacity: capacity) }
            if copied > 0 { return copied }
            guard let connection = machine.withLock({ $0.willProduce() }) else {
                if let end = endOfStream() { return end }
                continue
            }
            // A client that went away while the connection was suspended is not noticed by libmicrohttpd
            // until a write fails: look first, so that no event is produced (and counted as sent) for it.
            if Self.peerHasClosed(connection) { return Int(MHD_CONTENT_READER_END_WITH_ERROR) }
            switch produce() {
            case .send(let bytes):
                let encoded = encoding.withLock { $0.encoder?.compress(bytes, flush: .sync) } ?? bytes
                unsent.withLock { $0.set(encoded) }
            case .end:
                machine.withLock { $0.finish() }
                if let end = endOfStream() { return end }
            case .wait:
                switch machine.withLock({ $0.willWait() }) {
                case .produceAgain:
                    continue
                case .end:
                    if let end = endOfStream() { return end }
                case .suspend(let connection):
                    // An idle stream holds its connection's memory pool, whose free part libmicrohttpd lends this
                    // reader as `buffer`: give those pages back while it waits (the next event writes them again).
                    // Without this, this room, zeroed by libmicrohttpd and so resident, is most of an idle stream's
                    // memory.
                    _ = quire_release_pages(buffer, capacity)  // no system call when no whole page is inside
                    MHD_suspend_connection(connection.pointer)
                    let resume = machine.withLock { machine in
                        let resume = machine.didSuspend()
                        if resume != nil { connection.resumes?.begin() }
                        return resume
                    }
                    if let resume {
                        MHD_resume_connection(resume.pointer)
                        connection.resumes?.end()
                    }
                    return 0
                }
            }
        }
    }

    /// Whether the client closed its side of the connection (a plain TCP end of stream is waiting).
    private static func peerHasClosed(_ connection: ConnectionHandle) -> Bool {
        let socket = quire_mhd_connection_socket(connection.pointer)
        guard socket >= 0 else { return false }
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    /// A libmicrohttpd response reading from this stream (which it retains until it frees the response).
    func makeLibmicrohttpdResponse(extra: ExtraHeaders) -> OpaquePointer {
        let context = Unmanaged.passRetained(self).toOpaque()
        // The block libmicrohttpd allocates (zeroed) with the response and keeps for the stream's life. Over HTTP/1.1
        // the body is chunked and the reader writes into the connection's pool instead: the block is used only for
        // an HTTP/1.0 client (no chunks), which then reads an event in pieces of this size. 256 bytes, not 1 KiB:
        // an idle stream is mostly this and the connection's memory (`scripts/bench.py streams`).
        guard
            let handle = MHD_create_response_from_callback(
                UInt64.max, 256, streamReaderTrampoline, context, streamFreeTrampoline)
        else {
            Unmanaged<StreamingResponse>.fromOpaque(context).release()
            fatalError("libmicrohttpd could not allocate a streaming response")
        }
        for field in headers { addHeader(field.name, field.value, to: handle) }
        for field in addedFields.withLock({ $0 }) { addHeader(field.name, field.value, to: handle) }
        var extra = extra
        extra.noStore = !headers.contains("Cache-Control")  // a stream is one client's: never stored
        extra.add(to: handle)
        return handle
    }
}

/// The bytes of one piece not yet handed to libmicrohttpd.
/// The body's content coding, when the client accepts one: each piece compressed and flushed on its own
/// (a sync flush), so that an event never waits in the compressor for the next one.
private struct Encoding {
    var encoder: DeflateStream?
    /// The coding's trailer (gzip's CRC and length) has been given.
    var trailerGiven = false
}

private struct UnsentBytes {
    var bytes: [UInt8] = []
    var offset = 0

    mutating func set(_ bytes: [UInt8]) {
        self.bytes = bytes
        offset = 0
    }

    mutating func copy(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        let count = min(bytes.count - offset, capacity)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        if offset == bytes.count {
            bytes = []  // an idle stream keeps no buffer
            offset = 0
        }
        return count
    }
}

private func streamReaderTrampoline(
    cls: UnsafeMutableRawPointer?, position: UInt64, buffer: UnsafeMutablePointer<CChar>?, max: Int
) -> Int {
    guard let cls, let buffer, max > 0 else { return Int(MHD_CONTENT_READER_END_WITH_ERROR) }
    let stream = Unmanaged<StreamingResponse>.fromOpaque(cls).takeUnretainedValue()
    return stream.read(into: UnsafeMutableRawPointer(buffer), capacity: max)
}

private func streamFreeTrampoline(cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<StreamingResponse>.fromOpaque(cls).release()
}

/// The suspensions of one streaming connection, as a value: each event returns the action to perform.
///
/// The connection's thread produces, suspends when there is nothing to send, and is resumed by ``wake()``
/// from any thread: a wake that arrives while the producer runs or while the connection is being
/// suspended is never lost (the producer is asked again, or the connection resumed right after its
/// suspension); a connection is resumed once per suspension and never after the request ended.
struct StreamStateMachine: Sendable {
    enum State: Sendable, Equatable {
        /// Not queued yet.
        case unattached
        /// libmicrohttpd may call the reader.
        case running(ConnectionHandle)
        /// The reader is suspending the connection right now; `woken` if a wake came meanwhile.
        case suspending(ConnectionHandle, woken: Bool)
        /// Suspended: only ``wake()`` brings it back.
        case suspended(ConnectionHandle)
        /// The request is over.
        case ended
    }

    enum WaitAction: Equatable { case produceAgain, suspend(ConnectionHandle), end }
    enum WakeAction: Equatable { case none, resume(ConnectionHandle) }

    private(set) var state = State.unattached
    /// A wake came while the producer ran: ask it again instead of suspending.
    private(set) var wokenWhileRunning = false
    /// The producer is not asked again.
    private(set) var isFinishing = false

    var isEnded: Bool { state == .ended }

    mutating func attach(to connection: ConnectionHandle) {
        if case .unattached = state { state = .running(connection) }
    }

    /// Before asking the producer: the connection, or `nil` when the stream ends instead.
    mutating func willProduce() -> ConnectionHandle? {
        wokenWhileRunning = false
        guard !isFinishing, case .running(let connection) = state else { return nil }
        return connection
    }

    /// The producer has nothing to send.
    mutating func willWait() -> WaitAction {
        if isFinishing || state == .ended { return .end }
        if wokenWhileRunning { return .produceAgain }
        guard case .running(let connection) = state else { return .end }
        state = .suspending(connection, woken: false)
        return .suspend(connection)
    }

    /// The connection is suspended: resume it at once when a wake came meanwhile.
    mutating func didSuspend() -> ConnectionHandle? {
        guard case .suspending(let connection, let woken) = state else { return nil }
        if woken {
            state = .running(connection)
            return connection
        }
        state = .suspended(connection)
        return nil
    }

    mutating func wake() -> WakeAction {
        switch state {
        case .unattached, .running:
            wokenWhileRunning = true
            return .none
        case .suspending(let connection, _):
            state = .suspending(connection, woken: true)
            return .none
        case .suspended(let connection):
            state = .running(connection)
            return .resume(connection)
        case .ended:
            return .none
        }
    }

    mutating func finish() {
        isFinishing = true
    }

    mutating func end() {
        state = .ended
        isFinishing = true
    }
}
