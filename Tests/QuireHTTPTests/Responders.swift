import QuireHTTP
import QuireTesting

/// Test responders, each a real `HTTPResponder` behind a real server.
enum Responders {
    /// Echoes the method, path, query and body back.
    static let echo = ClosureResponder { request in
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/octet-stream")
        headers.add("X-Method", request.method)
        headers.add("X-Path", request.path)
        headers.add("X-Query", request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "&"))
        headers.add("X-Echo-Header", request.headers["x-test"] ?? "")
        return .response(Response(status: 200, headers: headers, body: request.body))
    }

    /// Answers `GET /?n=<index>` with 8,000 bytes that name the index: each answer can be told apart.
    static let numbered = ClosureResponder { request in
        let index = request.query.first { $0.name == "n" }?.value ?? ""
        return .response(Response(status: 200, body: numberedBody(index)))
    }

    static func numberedBody(_ index: String) -> [UInt8] {
        let line = Array("answer \(index);".utf8)
        return Array(repeating: line, count: 8000 / line.count + 1).joined().prefix(8000).map { $0 }
    }

    /// Answers after `milliseconds`, blocking its libmicrohttpd thread (a slow handler).
    static func slow(milliseconds: Int) -> ClosureResponder {
        ClosureResponder { _ in
            sleep(milliseconds: milliseconds)
            return .response(Response(status: 200, text: "slow"))
        }
    }

    /// Defers every request and answers it from another thread after `milliseconds`.
    static func deferred(milliseconds: Int) -> ClosureResponder {
        ClosureResponder { request in
            let pending = PendingResponse { Response(status: 503, text: "shutting down") }
            let path = request.path
            DetachedThread.start {
                sleep(milliseconds: milliseconds)
                pending.resume(with: Response(status: 200, text: "later \(path)"))
            }
            return .deferred(pending)
        }
    }
}
