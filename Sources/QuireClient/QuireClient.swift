public import Foundation
import HTTPTypes
public import OpenAPIRuntime
import OpenAPIURLSession
import QuireVersion

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A Quire server, as an app talks to it: `QuireClient(baseURL:token:)`, then ``session(list:options:)``
/// for each live list screen. One client serves every screen of the app: it holds the token and the
/// transport's connections, and it is `Sendable`.
///
/// ```swift
/// let client = QuireClient(baseURL: URL(string: "https://lists.example.com")!, token: { try await auth.token() })
/// let session = client.session(list: "inbox", options: .init(limit: 30))
/// Task { for await update in session.updates { render(update.window) } }
/// try await session.open()
/// ```
///
/// Every request goes through the `Client` that swift-openapi-generator makes from the repository's
/// `openapi.yaml` (built by its plugin into this module), and every answer is decoded by the types it
/// generates: the SDK cannot drift from the contract.
///
/// **Transports.** Any `ClientTransport` of swift-openapi-runtime carries the requests; the default is
/// `URLSessionTransport`. The event stream (openapi.yaml) needs a transport that hands a response body over
/// as it arrives (`streamsResponses`): `URLSessionTransport` does on Apple platforms, but on Linux
/// (swift-corelibs-foundation) it buffers the whole body, and a stream never ends, so there the default
/// client follows writes with long polls instead. `AsyncHTTPClientTransport`
/// (swift-openapi-async-http-client) streams on Linux too.
///
/// **Tokens.** Every request carries `Authorization: Bearer <token>` when the client has a token. On a `401`
/// (an expired or refused JSON Web Token) the client asks its refresh closure for a new token and sends the
/// request once more; a second `401`, or a `403` (the token does not cover the list), reaches the caller as a
/// ``QuireClientError``. See <doc:RecoveryAndTokens>.
public final class QuireClient: Sendable {
    /// The server's URL, under which the client sends `/v1/...` (the `servers` URL of `openapi.yaml`).
    public let baseURL: URL
    /// The transport hands response bodies over as they arrive: sessions with the `.automatic` transport
    /// follow writes on the event stream, else with long polls.
    public let streamsResponses: Bool
    let api: Client
    let tokens: TokenSource
    /// Cancelling a request in flight is safe with this transport: not so with URLSessionTransport on Linux,
    /// where swift-corelibs-foundation traps when a cancellation races the task's own end.
    let cancelsRequestsSafely: Bool

    /// A client on `URLSessionTransport` (an ephemeral `URLSession`).
    ///
    /// - Parameters:
    ///   - baseURL: the server, e.g. `https://lists.example.com`.
    ///   - token: the bearer token, or `nil` for a server without tokens.
    ///   - refresh: gives a new token when the server answers `401` (an expired JSON Web Token); the request
    ///     is then sent once more with it.
    public convenience init(
        baseURL: URL, token: String? = nil, refresh: (@Sendable () async throws -> String)? = nil
    ) {
        let (transport, streams) = Self.urlSessionTransport()
        self.init(
            baseURL: baseURL, transport: transport, streamsResponses: streams, cancelsRequestsSafely: streams,
            tokenSource: TokenSource(initial: token, refresh: refresh))
    }

    /// A client on `URLSessionTransport` whose token is given by a closure: called before the first request,
    /// and again whenever the server answers `401` (the request is then sent once more with the new token).
    ///
    /// Each refused request calls the closure at most once, and not at all when another request has replaced
    /// the refused token meanwhile. An error the closure throws fails that request.
    ///
    /// - Parameters:
    ///   - baseURL: the server, e.g. `https://lists.example.com`.
    ///   - token: gives the bearer token (the app's sign-in, a keychain); called again after a `401`.
    public convenience init(baseURL: URL, token: @escaping @Sendable () async throws -> String) {
        let (transport, streams) = Self.urlSessionTransport()
        self.init(
            baseURL: baseURL, transport: transport, streamsResponses: streams, cancelsRequestsSafely: streams,
            tokenSource: TokenSource(initial: nil, refresh: token))
    }

    /// A client on any transport of swift-openapi-runtime.
    ///
    /// - Parameters:
    ///   - baseURL: the server, e.g. `https://lists.example.com`.
    ///   - transport: carries the generated client's requests (e.g. `AsyncHTTPClientTransport`).
    ///   - streamsResponses: whether `transport` hands a response body over as it arrives; only then do
    ///     sessions use the event stream (a buffering transport would wait for a stream's end forever).
    ///   - token: the bearer token, or `nil` for a server without tokens.
    ///   - refresh: gives a new token when the server answers `401`; the request is then sent once more.
    public convenience init(
        baseURL: URL, transport: any ClientTransport, streamsResponses: Bool, token: String? = nil,
        refresh: (@Sendable () async throws -> String)? = nil
    ) {
        self.init(
            baseURL: baseURL, transport: transport, streamsResponses: streamsResponses, cancelsRequestsSafely: true,
            tokenSource: TokenSource(initial: token, refresh: refresh))
    }

    init(
        baseURL: URL, transport: any ClientTransport, streamsResponses: Bool, cancelsRequestsSafely: Bool,
        tokenSource: TokenSource
    ) {
        self.baseURL = baseURL
        self.streamsResponses = streamsResponses
        self.cancelsRequestsSafely = cancelsRequestsSafely
        tokens = tokenSource
        api = Client(
            serverURL: baseURL, transport: transport,
            middlewares: [UserAgentMiddleware(), BearerTokenMiddleware(tokens: tokenSource)])
    }

    /// The default transport, and whether it streams: on Apple platforms URLSession streams response
    /// bodies; swift-corelibs-foundation's URLSessionTransport (Linux) buffers them.
    static func urlSessionTransport() -> (URLSessionTransport, Bool) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 90  // longer than a long poll's wait, and than heartbeats
        configuration.httpMaximumConnectionsPerHost = 8
        let transport = URLSessionTransport(configuration: .init(session: URLSession(configuration: configuration)))
        #if canImport(FoundationNetworking)
            return (transport, false)
        #else
            return (transport, true)
        #endif
    }

    /// A live session on `list`; nothing is sent until ``QuireSession/open()``.
    ///
    /// The first page is the first update of ``QuireSession/updates``, which keeps every update until it is
    /// read: the loop that applies them may start before `open()` or after it.
    ///
    /// - Parameters:
    ///   - list: the list's name (1 to 128 of `A-Z a-z 0-9 . _ -`).
    ///   - options: the page size, change format, transport and the rest; the server's defaults otherwise.
    public func session(list: String, options: QuireSession.Options = QuireSession.Options()) -> QuireSession {
        QuireSession(client: self, list: list, options: options)
    }
}

/// Names the SDK and its release in every request's `User-Agent` (`QuireClient/<version>`), so that the access log of
/// a proxy in front (nginx's combined format) shows which releases of the SDK the apps run.
struct UserAgentMiddleware: ClientMiddleware {
    static let value = "QuireClient/\(Release.version)"

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.userAgent] = Self.value
        return try await next(request, body, baseURL)
    }
}

/// Sends the bearer token with every request of the generated client; on `401`, asks the token source for
/// a new token and sends the request once more (openapi.yaml: an expired JSON Web Token).
struct BearerTokenMiddleware: ClientMiddleware {
    let tokens: TokenSource

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        let token = try await tokens.current()
        if let token { request.headerFields[.authorization] = "Bearer \(token)" }
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status == .unauthorized, tokens.canRefresh else { return (response, responseBody) }
        // The refused answer is read to its end (a problem document) so that its connection can be reused.
        if let responseBody { _ = try? await Data(collecting: responseBody, upTo: 1 << 16) }
        guard let fresh = try await tokens.refreshed(after: token) else { return (response, nil) }
        request.headerFields[.authorization] = "Bearer \(fresh)"
        // Request bodies of the generated client are JSON bytes in memory: they can be sent again.
        return try await next(request, body, baseURL)
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

    /// The token to send: the last one, or the closure's first.
    func current() async throws -> String? {
        if let token = state.value { return token }
        guard let refresher else { return nil }
        let token = try await refresher()
        state.value = token
        return token
    }

    /// A token to replace `failed`, which the server refused: the closure's new one, or the one another
    /// request got meanwhile (several requests refused at once call the closure once each at most).
    func refreshed(after failed: String?) async throws -> String? {
        guard let refresher else { return nil }
        if let now = state.value, now != failed { return now }
        let token = try await refresher()
        state.value = token
        return token
    }
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
}
