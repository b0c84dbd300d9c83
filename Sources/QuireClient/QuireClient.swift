public import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A Quire server, as an app talks to it: `QuireClient(baseURL:token:)`, then ``session(list:options:)``
/// for each live list screen.
///
/// ```swift
/// let client = QuireClient(baseURL: URL(string: "https://lists.example.com")!, token: { try await auth.token() })
/// let session = client.session(list: "inbox", options: .init(limit: 30))
/// Task { for await update in session.updates { render(update.window) } }
/// try await session.open()
/// ```
public final class QuireClient: Sendable {
    public let baseURL: URL
    let urlSession: URLSession
    let tokens: TokenSource

    /// - Parameters:
    ///   - token: the bearer token, or `nil` for a server without tokens.
    ///   - refresh: gives a new token when the server answers `401` (an expired JSON Web Token).
    public convenience init(
        baseURL: URL, token: String? = nil, refresh: (@Sendable () async throws -> String)? = nil
    ) {
        self.init(baseURL: baseURL, tokenSource: TokenSource(initial: token, refresh: refresh))
    }

    /// A token given by a closure, called first and again whenever the server answers `401`.
    public convenience init(baseURL: URL, token: @escaping @Sendable () async throws -> String) {
        self.init(baseURL: baseURL, tokenSource: TokenSource(initial: nil, refresh: token))
    }

    init(baseURL: URL, tokenSource: TokenSource) {
        self.baseURL = baseURL
        self.tokens = tokenSource
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 90  // longer than a long poll's wait
        configuration.httpMaximumConnectionsPerHost = 8
        urlSession = URLSession(configuration: configuration)
    }

    /// A live session on `list`; nothing is sent until ``QuireSession/open()``.
    public func session(list: String, options: QuireSession.Options = QuireSession.Options()) -> QuireSession {
        QuireSession(client: self, list: list, options: options)
    }

    /// One request; `401` is answered by refreshing the token and trying once more.
    func send(_ method: String, _ path: String, query: [URLQueryItem] = [], json: ClientJSON? = nil) async throws
        -> HTTPAnswer
    {
        var refreshed = false
        while true {
            var request = URLRequest(url: url(path, query: query))
            request.httpMethod = method
            if let json {
                request.httpBody = Data(json.serialized())
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            if let token = try await tokens.current() {
                request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            }
            let (data, response) = try await urlSession.data(for: request)
            let answer = HTTPAnswer(data: data, response: response as? HTTPURLResponse)
            if answer.status == 401 && !refreshed && tokens.canRefresh {
                refreshed = true
                try await tokens.refresh()
                continue
            }
            return answer
        }
    }

    func url(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query }
        return components.url!
    }
}

/// The bearer token: the one given, refreshed on demand by the app's closure.
final class TokenSource: Sendable {
    private let state: LockedValue<String?>
    private let refresher: (@Sendable () async throws -> String)?

    init(initial: String?, refresh: (@Sendable () async throws -> String)?) {
        state = LockedValue(initial)
        refresher = refresh
    }

    var canRefresh: Bool { refresher != nil }

    func current() async throws -> String? {
        if let token = state.value { return token }
        guard refresher != nil else { return nil }
        try await refresh()
        return state.value
    }

    func refresh() async throws {
        guard let refresher else { return }
        let token = try await refresher()
        state.value = token
    }
}

/// A status, headers and body.
struct HTTPAnswer: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    init(data: Data, response: HTTPURLResponse?) {
        status = response?.statusCode ?? 0
        var headers: [String: String] = [:]
        for (name, value) in response?.allHeaderFields ?? [:] {
            headers[String(describing: name).lowercased()] = String(describing: value)
        }
        self.headers = headers
        body = data
    }

    init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body parsed as JSON.
    func json() throws -> ClientJSON {
        try ClientJSON(parsing: body)
    }

    /// The problem document's type name (`session-not-found`), if the body is one.
    var problem: String? {
        guard let type = (try? json())?["type"]?.stringValue else { return nil }
        return type.split(separator: "/").last.map(String.init)
    }

    /// `Retry-After` in seconds.
    var retryAfter: Double? { headers["retry-after"].flatMap(Double.init) }
}

/// A value behind a lock, for the few mutable parts shared across threads.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable is safe: `stored` is only read and written while `lock` is held.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&stored) }
    }
}

extension ClientJSON {
    /// The value as JSON text; whole numbers are written without a fraction (`20`, not `20.0`: the server
    /// takes limits and `seq` as integers).
    func serialized() -> [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number):
            if let whole = Int64(exactly: number) {
                out.append(contentsOf: String(whole).utf8)
            } else {
                out.append(contentsOf: "\(number)".utf8)
            }
        case .string(let string): Self.writeString(string, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                members[key]!.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out.append(contentsOf: "\\\"".utf8)
            case "\\": out.append(contentsOf: "\\\\".utf8)
            case "\n": out.append(contentsOf: "\\n".utf8)
            case "\r": out.append(contentsOf: "\\r".utf8)
            case "\t": out.append(contentsOf: "\\t".utf8)
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
            default: out.append(contentsOf: String(scalar).utf8)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
