import Foundation
import QuireClient
import QuireCore
import QuireHTTP
import QuireTesting
import Testing

@testable import QuireAPI
@testable import QuireAuth

/// A real service on port 0 and JSON helpers to talk to it.
final class APIFixture: Sendable {
    let service: QuireService
    let server: TestServer

    /// - Parameters:
    ///   - keys: the keys of JSON Web Tokens, when `configure` enables them.
    ///   - store: where the lists are kept (none by default: the registry's memory).
    ///   - rateLimitClock: what rate-limit buckets refill by, when `configure` turns them on.
    init(
        keys: TokenKeys? = nil, store: any ListStore = InMemoryListStore(),
        rateLimitClock: RateLimitClock = .monotonic,
        _ configure: (inout QuireService.Configuration) -> Void = { _ in }
    ) throws {
        var configuration = QuireService.Configuration.testing
        configuration.demo.seed = false
        configure(&configuration)
        service = QuireService(
            configuration: configuration, logger: TestServer.logger, store: store, keys: keys,
            rateLimitClock: rateLimitClock)
        try service.startAndLoad()
        server = try TestServer(running: service.server)
    }

    func stop() {
        service.shutdown()
    }

    /// One request; JSON bodies get `Content-Type: application/json`. With `sourceHost` (`127.0.0.2`, …) the
    /// request comes from that loopback address.
    @discardableResult
    func call(
        _ method: String, _ target: String, json: Any? = nil, headers: [(String, String)] = [],
        sourceHost: String? = nil
    ) throws -> ClientResponse {
        var headers = headers
        var body: [UInt8]?
        if let json {
            body = Array(try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed]))
            headers.append(("Content-Type", "application/json"))
        }
        // A generous timeout: the suite runs in parallel on two cores, and a slow answer is not a wrong one.
        return try server.connect(timeoutSeconds: 60, sourceHost: sourceHost).request(
            method, target, headers: headers, body: body)
    }

    /// Creates or replaces a list; expects success.
    @discardableResult
    func put(_ list: String, _ document: [String: Any], headers: [(String, String)] = []) throws -> Int {
        let response = try call("PUT", "/v1/lists/\(list)", json: document, headers: headers)
        try #require([200, 201].contains(response.status), "PUT failed: \(response.status) \(response.text)")
        return try response.object()["version"] as! Int
    }

    /// Applies ops; expects success.
    @discardableResult
    func ops(_ list: String, _ ops: [[String: Any]]) throws -> Int {
        let response = try call("POST", "/v1/lists/\(list)/ops", json: ["ops": ops])
        try #require(response.status == 200, "ops failed: \(response.status) \(response.text)")
        return try response.object()["version"] as! Int
    }

    /// The ids of the list's top-level items, in order, read from the core.
    func listIDs(_ list: String) -> [String] {
        guard let version = service.registry.version(of: list) else { return [] }
        return version.window(range: 0..<version.visibleCount()).itemIDs
    }

    /// The session's window as the server holds it, cut afresh from the current version.
    func freshWindow(ofSession id: String) throws -> ClientWindow {
        let session = try #require(service.context.sessions.session(id))
        let window = session.current.window
        var bytes: [UInt8] = []
        window.encodeSections(into: &bytes)
        return try ClientWindow(pageSections: Data(bytes))
    }
}

/// A list document of `sections` sections with `items` items each (ids `s{n}-{m}`), some with children.
func listDocument(sections: Int, items: Int, prefix: String = "", childrenEvery: Int = 0) -> [String: Any] {
    [
        "sections": (0..<sections).map { section -> [String: Any] in
            [
                "id": "\(prefix)sec-\(section)",
                "header": ["type": "header", "data": ["title": "Section \(section)"]],
                "items": (0..<items).map { item -> [String: Any] in
                    var element: [String: Any] = [
                        "id": "\(prefix)s\(section)-\(item)", "type": "row", "data": ["n": item],
                    ]
                    if childrenEvery > 0 && item % childrenEvery == 0 {
                        element["children"] = (0..<2).map { child in
                            ["id": "\(prefix)s\(section)-\(item)-c\(child)", "type": "child", "data": NSNull()]
                        }
                    }
                    return element
                },
            ]
        }
    ]
}

extension ClientResponse {
    /// The body as a JSON object.
    func object() throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        return try #require(value as? [String: Any], "not a JSON object: \(text)")
    }

    /// The problem document's slug (`not-found`), checking the media type.
    func problemSlug() throws -> String {
        #expect(headers["Content-Type"] == "application/problem+json", "not a problem document: \(text)")
        let type = try #require(try object()["type"] as? String)
        return String(type.dropFirst(Problem.Kind.typeBase.count))
    }
}

/// A thin client holding one session's window, as a phone would: it applies every answer with
/// QuireClient, so a wrong diff fails here.
final class SessionClient {
    let fixture: APIFixture
    let id: String
    let format: String
    private(set) var window: ClientWindow
    private(set) var version: Int
    private(set) var hasNext: Bool
    private(set) var hasPrev: Bool

    init(_ fixture: APIFixture, list: String, options: [String: Any] = [:]) throws {
        self.fixture = fixture
        let response = try fixture.call("POST", "/v1/lists/\(list)/sessions", json: options)
        try #require(response.status == 201, "session not created: \(response.text)")
        let object = try response.object()
        id = try #require(object["session"] as? String)
        format = try #require(object["format"] as? String)
        version = try #require(object["version"] as? Int)
        window = try ClientWindow(pageSections: JSONSerialization.data(withJSONObject: object["sections"]!))
        let page = try #require(object["page"] as? [String: Any])
        hasNext = page["hasNext"] as! Bool
        hasPrev = page["hasPrev"] as! Bool
    }

    /// `GET changes?since=` (with `query` appended), applied to the window. Returns the raw answer.
    @discardableResult
    func sync(_ query: String = "") throws -> [String: Any] {
        let response = try fixture.call("GET", "/v1/sessions/\(id)/changes?since=\(version)\(query)")
        try #require(response.status == 200, "changes failed: \(response.status) \(response.text)")
        return try apply(response)
    }

    /// Applies an answer of changes, expand, collapse or reset.
    func apply(_ response: ClientResponse) throws -> [String: Any] {
        let answer = try response.object()
        #expect(answer["from"] as? Int == version || answer["reset"] != nil)
        if let reset = answer["reset"] as? [String: Any] {
            window = try ClientWindow(pageSections: JSONSerialization.data(withJSONObject: reset["sections"]!))
        } else {
            let changes = try JSONSerialization.data(withJSONObject: answer["changes"]!)
            if format == "batch" {
                try window.apply(batch: changes)
            } else {
                try window.apply(sequential: changes)
            }
        }
        version = try #require(answer["version"] as? Int)
        let page = try #require(answer["page"] as? [String: Any])
        hasNext = page["hasNext"] as! Bool
        hasPrev = page["hasPrev"] as! Bool
        return answer
    }
}
