import Foundation
import QuireHTTP
import QuireTesting
import Testing

@testable import QuireAPI

/// The OpenAPI document: served as committed, and describing exactly the routes the service has.
@Suite("OpenAPI document")
struct OpenAPITests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("openapi.yaml")

    /// `(METHOD, path)` of every operation under `paths:` (2-space YAML: paths at 2, methods at 4).
    static func specOperations(_ yaml: String) -> Set<String> {
        var operations = Set<String>()
        var inPaths = false
        var path: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty {
                inPaths = line == "paths:"
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "put", "post", "delete", "patch", "head", "options"].contains(method) {
                    operations.insert("\(method.uppercased()) \(path)")
                }
            }
        }
        return operations
    }

    @Test("served at /openapi.yaml as YAML, byte for byte the committed openapi.yaml, with a tag from its bytes")
    func served() throws {
        let file = try Data(contentsOf: Self.file)
        let service = QuireService(configuration: .testing, logger: TestServer.logger)
        try service.startAndLoad()
        defer { service.shutdown() }
        let response = try TestServer(running: service.server).request("GET", "/openapi.yaml")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"]?.hasPrefix("application/yaml") == true)
        #expect(response.headers["Cache-Control"] == "max-age=300")
        #expect(response.body == Array(file))
        #expect(response.headers["ETag"] == CachePolicy.entityTag(of: Array(file)))
    }

    @Test("every route the service answers is in the spec, and every operation of the spec is a route")
    func routesMatchSpec() throws {
        let spec = Self.specOperations(try String(contentsOf: Self.file, encoding: .utf8))
        #expect(spec.count > 10)
        let service = QuireService(configuration: .testing, logger: TestServer.logger)
        let routes = Set(service.routes.map { "\($0.method) \($0.pattern)" })
        #expect(routes.subtracting(spec).sorted() == [], "routes missing from openapi.yaml")
        #expect(spec.subtracting(routes).sorted() == [], "operations of openapi.yaml the service lacks")
    }
}

extension QuireService.Configuration {
    /// Port 0 on loopback, two threads, a short drain.
    static var testing: Self {
        var configuration = Self()
        configuration.http.port = 0
        configuration.http.threads = 2
        configuration.http.drainTimeoutSeconds = 2
        return configuration
    }
}
