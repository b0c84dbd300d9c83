internal import CLibPQ

extension ReplicationConnection {
    /// The next message of the stream, waiting at most `timeout` for it: XLogData (a pgoutput message) or a
    /// keepalive. Returns nil when none arrived in time, so that the caller can send a status update or stop
    /// (`PQgetCopyData` without blocking, `poll` on the connection's socket).
    ///
    /// Answer a keepalive that asks for a reply (``PrimaryKeepalive/replyRequested``) with ``sendStatus(_:)``
    /// before `wal_sender_timeout` (60 s by default) passes, or the server ends the connection; send one now and then
    /// anyway, so that the slot lets the log go.
    ///
    /// - Throws: ``PostgresError``: the server's error when it ended the stream (`57P01` terminated, `42704` the
    ///   slot dropped), ``SQLState/connectionFailure`` when the connection is lost,
    ///   ``SQLState/protocolViolation`` for a message that cannot be read. The connection no longer streams after
    ///   any of them.
    /// - Complexity: O(*n*) in the message's length.
    public func readMessage(timeout: Duration) throws(PostgresError) -> ReplicationMessage? {
        precondition(isStreaming, "readMessage before START_REPLICATION")
        let context = "reading the replication stream"
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(connection.handle, &buffer, 1)
            if length > 0, let buffer {
                let bytes = [UInt8](UnsafeRawBufferPointer(start: buffer, count: Int(length)))
                PQfreemem(buffer)
                do {
                    return try ReplicationMessage(decoding: bytes)
                } catch {
                    isStreaming = false
                    throw PostgresError.protocolViolation(error.description, context: context, url: connection.url)
                }
            }
            if length == -1 {
                // The server ended the copy: its error, if it sent one, is the stream's result.
                isStreaming = false
                try connection.finishResults(context: context)
                throw PostgresError.protocolViolation(
                    "the server ended the replication stream", context: context, url: connection.url)
            }
            guard length == 0 else {
                isStreaming = false
                throw connection.connectionError(context, .connectionFailure)
            }
            guard try connection.waitForSocket(Int16(POLLIN), until: deadline, context: context) else { return nil }
            guard PQconsumeInput(connection.handle) == 1 else {
                isStreaming = false
                throw connection.connectionError(context, .connectionFailure)
            }
        }
    }

    /// Sends a standby status update (`r`) and flushes it: the slot's `confirmed_flush_lsn` becomes
    /// `status.flushed`, and the server may remove the log before it.
    ///
    /// - Throws: ``PostgresError`` when the connection is lost.
    public func sendStatus(_ status: StandbyStatusUpdate) throws(PostgresError) {
        precondition(isStreaming, "sendStatus before START_REPLICATION")
        let context = "sending a status update (flushed \(status.flushed))"
        let bytes = status.encoded
        let queued = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                PQputCopyData(connection.handle, $0.baseAddress, Int32($0.count))
            }
        }
        guard queued == 1, PQflush(connection.handle) == 0 else {
            throw connection.connectionError(context, .connectionFailure)
        }
    }

    /// Ends the stream cleanly: tells the server the client is done (`PQputCopyEnd`), drops what it still sends
    /// until it ends the copy too, and reads the command's result. The connection can then run commands again
    /// (``dropSlot(named:wait:)``). Does nothing when the connection does not stream.
    ///
    /// Send a last status update before, if there is progress to confirm: what arrives while stopping is dropped.
    ///
    /// - Parameter timeout: how long the server may take to end the copy; past it, close the connection.
    /// - Throws: ``PostgresError`` when the connection is lost or the server does not end the copy in time.
    public func stopReplication(timeout: Duration = .seconds(10)) throws(PostgresError) {
        guard isStreaming else { return }
        isStreaming = false
        let context = "stopping the replication stream"
        guard PQputCopyEnd(connection.handle, nil) == 1, PQflush(connection.handle) == 0 else {
            throw connection.connectionError(context, .connectionFailure)
        }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(connection.handle, &buffer, 1)
            if let buffer { PQfreemem(buffer) }
            if length == -1 { break }
            if length < -1 { throw connection.connectionError(context, .connectionFailure) }
            guard length == 0 else { continue }
            guard try connection.waitForSocket(Int16(POLLIN), until: deadline, context: context) else {
                throw PostgresError(
                    sqlState: .connectionFailure, message: "the server did not end the stream within \(timeout)",
                    context: context)
            }
            guard PQconsumeInput(connection.handle) == 1 else {
                throw connection.connectionError(context, .connectionFailure)
            }
        }
        try connection.finishResults(context: context)
    }
}
