import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One server-sent event.
struct StreamEvent: Sendable, Equatable {
    var id: String?
    var event = "message"
    var data = ""
}

/// What reading an event stream gives: its events, or the answer that refused it.
enum EventStreamOutput: Sendable {
    case opened
    case event(StreamEvent)
    /// The server answered something else than `200` (a problem document).
    case refused(HTTPAnswer)
}

/// Reads a `text/event-stream` with a delegate-based data task: swift-corelibs-foundation (Linux) has no
/// `URLSession.bytes(for:)`, but hands a data task's body to its delegate chunk by chunk as it arrives,
/// on Linux as on Apple platforms. Ends when the server ends the body, the connection fails, or the
/// consumer stops iterating (the task is cancelled).
final class EventSourceReader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable is safe: the delegate methods run on the session's serial delegate queue
    // (`maxConcurrentOperationCount = 1`), and so does the cancellation (an operation added to that queue):
    // that queue is the only place `parser`, `response`, `refusedBody` and `isCompleted` are touched;
    // `continuation` is Sendable.
    private let continuation: AsyncThrowingStream<EventStreamOutput, any Error>.Continuation
    private var parser = EventStreamParser()
    private var response: HTTPURLResponse?
    private var refusedBody = Data()
    /// The task has completed: it must not be cancelled any more (swift-corelibs-foundation traps when a
    /// cancellation reaches a task it has already removed from its registry).
    private var isCompleted = false

    private init(continuation: AsyncThrowingStream<EventStreamOutput, any Error>.Continuation) {
        self.continuation = continuation
    }

    /// Starts reading `request`.
    static func open(_ request: URLRequest, configuration: URLSessionConfiguration) -> AsyncThrowingStream<
        EventStreamOutput, any Error
    > {
        AsyncThrowingStream { continuation in
            let reader = EventSourceReader(continuation: continuation)
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let session = URLSession(configuration: configuration, delegate: reader, delegateQueue: queue)
            let task = session.dataTask(with: request)
            // The consumer stopped (or the stream ended): cancel on the delegate queue, so that a task whose
            // completion was delivered is never cancelled after it.
            continuation.onTermination = { _ in
                #if canImport(FoundationNetworking)
                    // swift-corelibs-foundation (Linux) traps ("a task that in not in the registry") when a
                    // cancellation races the task's own end inside URLSession, whatever the delegate does, and
                    // that kills the app. So there the task is left to end by itself: the server ends an
                    // abandoned stream (a session's next stream ends the one before; DELETE ends it with
                    // `gone`; shutdown ends them all), and what arrives meanwhile goes nowhere.
                    _ = task
                #else
                    queue.addOperation {
                        guard !reader.isCompleted else { return }
                        task.cancel()
                    }
                #endif
            }
            task.resume()
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        self.response = response as? HTTPURLResponse
        if self.response?.statusCode == 200 { continuation.yield(.opened) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard response?.statusCode == 200 else {
            refusedBody.append(data)
            return
        }
        for event in parser.feed(data) { continuation.yield(.event(event)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard !isCompleted else { return }
        isCompleted = true
        if let response, response.statusCode != 200 {
            continuation.yield(.refused(HTTPAnswer(data: refusedBody, response: response)))
            continuation.finish()
        } else if let error {
            continuation.finish(throwing: error)
        } else {
            continuation.finish()
        }
        session.finishTasksAndInvalidate()
    }
}

/// The `text/event-stream` format: lines, `field: value`, events ended by an empty line; comments
/// (`:`) are skipped. CR, LF and CRLF all end lines.
struct EventStreamParser: Sendable {
    private var buffer: [UInt8] = []
    private var current = StreamEvent()
    private var data: [String] = []
    private var hasData = false

    mutating func feed(_ bytes: Data) -> [StreamEvent] {
        buffer.append(contentsOf: bytes)
        var events: [StreamEvent] = []
        var start = 0
        var index = 0
        while index < buffer.count {
            let byte = buffer[index]
            guard byte == 10 || byte == 13 else {
                index += 1
                continue
            }
            if byte == 13 && index + 1 == buffer.count { break }  // CR at the end: maybe CRLF
            let line = String(decoding: buffer[start..<index], as: UTF8.self)
            index += (byte == 13 && buffer[index + 1] == 10) ? 2 : 1
            start = index
            if let event = take(line) { events.append(event) }
        }
        buffer.removeFirst(start)
        return events
    }

    private mutating func take(_ line: String) -> StreamEvent? {
        if line.isEmpty {
            defer {
                current = StreamEvent()
                data = []
                hasData = false
            }
            guard hasData || current.event != "message" else { return nil }
            var event = current
            event.data = data.joined(separator: "\n")
            return event
        }
        if line.hasPrefix(":") { return nil }
        let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        var value = parts.count > 1 ? String(parts[1]) : ""
        if value.hasPrefix(" ") { value.removeFirst() }
        switch parts[0] {
        case "id": current.id = value
        case "event": current.event = value
        case "data":
            data.append(value)
            hasData = true
        default: break
        }
        return nil
    }
}
