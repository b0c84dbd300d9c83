import QuireAPI
import QuireCore
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

/// A store that keeps the versions committed to it, in memory: what a later service loads.
private final class KeepingStore: ListStore {
    private let lists = Mutex<[String: ListVersion]>([:])

    func loadAll(limits: ListLimits) throws -> [String: ListVersion] { lists.withLock { $0 } }

    func commit(list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?)
        throws -> Int64?
    {
        lists.withLock { $0[list] = next }
        return nil
    }

    func delete(list: String, previous: ListVersion, at position: Int64) throws -> Int64? {
        lists.withLock { $0[list] = nil }
        return nil
    }

    func retiredVersion(of list: String) throws -> UInt64 { 0 }

    /// `nil`: listed from the registry's memory, which loads every list kept here.
    func summaries(of selection: ListSelection, after: String?, limit: Int) throws -> [ListSummary]? { nil }
}

/// The service's operations endpoints and error documents, over loopback HTTP.
@Suite("Service over HTTP")
struct ServiceTests {
    static func start(_ configure: (inout QuireService.Configuration) -> Void = { _ in }) throws -> (
        QuireService, TestServer
    ) {
        var configuration = QuireService.Configuration()
        configuration.http.port = 0
        configuration.http.threads = 2
        configuration.http.drainTimeoutSeconds = 2
        configure(&configuration)
        let service = QuireService(configuration: configuration, logger: TestServer.logger)
        try service.startAndLoad()
        let server = try TestServer(running: service.server)
        return (service, server)
    }

    @Test("GET /healthz answers 200 {\"status\":\"ok\"}, HEAD too")
    func health() throws {
        let (service, server) = try Self.start()
        defer { service.shutdown() }
        let response = try server.request("GET", "/healthz")
        #expect(response.status == 200)
        #expect(response.text == #"{"status":"ok"}"#)
        #expect(response.headers["Content-Type"] == "application/json")
        let head = try server.request("HEAD", "/healthz")
        #expect(head.status == 200)
        #expect(head.headers["Content-Length"] == "15")
    }

    @Test("GET /readyz answers 200 when ready, 503 overloaded while starting or draining")
    func readiness() throws {
        let (service, server) = try Self.start()
        defer { service.shutdown() }
        #expect(try server.request("GET", "/readyz").status == 200)
        for state in [Readiness.State.starting, .draining] {
            service.readiness.set(state)
            let response = try server.request("GET", "/readyz")
            #expect(response.status == 503)
            #expect(response.headers["Retry-After"] != nil)
            #expect(try ProblemDocument(response.body).type == "https://quire.dev/problems/overloaded")
        }
    }

    @Test(
        "before its lists are loaded the service answers /v1 with 503 overloaded: nothing read as missing, nothing written as new"
    )
    func notLoadedYet() throws {
        var configuration = QuireService.Configuration()
        configuration.http.port = 0
        configuration.http.drainTimeoutSeconds = 2
        let store = KeepingStore()
        let first = QuireService(configuration: configuration, logger: TestServer.logger, store: store)
        try first.startAndLoad()
        let document = Array(#"{"sections":[{"id":"s","items":[{"id":"a","type":"t"}]}]}"#.utf8)
        for _ in 0..<3 {
            let written = try TestServer(running: first.server).request(
                "PUT", "/v1/lists/kept", headers: [("Content-Type", "application/json")], body: document)
            #expect([200, 201].contains(written.status))
        }
        first.shutdown()
        #expect(try store.loadAll(limits: ListLimits())["kept"]?.version == 3)

        // A second instance on the same store, listening before it has loaded the lists.
        let second = QuireService(configuration: configuration, logger: TestServer.logger, store: store)
        try second.start()
        defer { second.shutdown() }
        let server = try TestServer(running: second.server)
        for (method, target) in [("GET", "/v1/lists/kept"), ("GET", "/v1/lists"), ("PUT", "/v1/lists/kept")] {
            let response = try server.request(
                method, target, headers: [("Content-Type", "application/json")], body: method == "PUT" ? document : nil)
            #expect(response.status == 503, "\(method) \(target)")
            #expect(response.headers["Retry-After"] != nil)
            #expect(try ProblemDocument(response.body).type == "https://quire.dev/problems/overloaded")
        }
        #expect(try server.request("GET", "/healthz").status == 200)
        try second.load()
        let loaded = try server.request("GET", "/v1/lists/kept")
        #expect(loaded.status == 200)
        #expect(loaded.headers["ETag"] == "\"3\"")
    }

    @Test("unknown routes and methods get problem documents over HTTP")
    func notFoundAndMethodNotAllowed() throws {
        let (service, server) = try Self.start()
        defer { service.shutdown() }
        let connection = try server.connect()
        let missing = try connection.request("GET", "/no/such/thing?x=1")
        #expect(missing.status == 404)
        #expect(missing.headers["Content-Type"] == "application/problem+json")
        #expect(try ProblemDocument(missing.body).detail.contains("/no/such/thing"))
        let wrongMethod = try connection.request("DELETE", "/healthz")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["Allow"] == "GET, HEAD")
        #expect(try ProblemDocument(wrongMethod.body).type == "https://quire.dev/problems/method-not-allowed")
    }

    @Test("oversized bodies get 413 payload-too-large on any route, declared or chunked")
    func payloadTooLarge() throws {
        let (service, server) = try Self.start { $0.http.maxBodyBytes = 512 }
        defer { service.shutdown() }
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        for chunked in [nil, 100] as [Int?] {
            let response = try server.connect().request("PUT", "/v1/lists/demo", body: body, chunked: chunked)
            #expect(response.status == 413)
            let document = try ProblemDocument(response.body)
            #expect(document.type == "https://quire.dev/problems/payload-too-large")
            #expect(document.members["limit"] as? Int == 512)
        }
    }

    @Test("shutdown flips readiness and refuses new connections")
    func shutdown() throws {
        let (service, server) = try Self.start()
        service.shutdown()
        #expect(service.readiness.state == .draining)
        #expect(throws: HTTPClientError.self) { try server.connect(timeoutSeconds: 1) }
    }
}
