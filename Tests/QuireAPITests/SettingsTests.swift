import Configuration
import Foundation
import QuireAPI
import QuireAuth
import QuireHTTP
import SystemPackage
import Testing

@testable import quire

@Suite("Settings: defaults < file < environment < flags")
struct SettingsTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let configFile = repositoryRoot.appendingPathComponent("config/quire.yaml").path

    static func file(_ yaml: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("quire-\(UUID()).yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("config/quire.yaml sets every key, to the embedded default")
    func shippedFileIsTheDefault() async throws {
        // Read the file alone, without the embedded defaults behind it: a key it lacks fails here.
        let reader = ConfigReader(provider: try await FileProvider<YAMLSnapshot>(filePath: FilePath(Self.configFile)))
        let fromFile = try Settings(reader: reader)
        let embedded = try await Settings.load(configFile: nil, environment: [:], flags: [:])
        #expect(fromFile == embedded)
        #expect(embedded == Settings())
        let text = try String(contentsOfFile: Self.configFile, encoding: .utf8)
        for key in Settings.keys.map(\.key) {
            #expect(text.contains("  \(key.split(separator: ".").last!):"), "config/quire.yaml lacks \(key)")
        }
    }

    @Test("the embedded defaults")
    func defaults() async throws {
        let settings = try await Settings.load(configFile: nil, environment: [:], flags: [:])
        #expect(settings.service.http.host == "127.0.0.1")
        #expect(settings.service.http.port == 8080)
        #expect(settings.service.http.threads == HTTPServer.Configuration.coreCount)
        #expect(settings.service.writeToken == nil)
        #expect(settings.logFormat == .text)
        #expect(settings.storagePath == "data/quire.sqlite")
    }

    @Test("the storage path from the file, the environment or --storage")
    func storagePath() async throws {
        let path = try Self.file("storage:\n  path: /srv/lists.sqlite\n")
        #expect(
            try await Settings.load(configFile: path, environment: [:], flags: [:]).storagePath == "/srv/lists.sqlite")
        let fromEnvironment = try await Settings.load(
            configFile: path, environment: ["QUIRE_STORAGE_PATH": ":memory:"], flags: [:])
        #expect(fromEnvironment.storagePath == ":memory:")
        let fromFlag = try await Settings.load(
            configFile: path, environment: ["QUIRE_STORAGE_PATH": ":memory:"], flags: ["storage.path": .string("x.db")])
        #expect(fromFlag.storagePath == "x.db")
        await #expect(throws: SettingsError.self) {
            try await Settings.load(configFile: nil, environment: ["QUIRE_STORAGE_PATH": ""], flags: [:])
        }
    }

    @Test("storage.journalWrites: 16384 by default, 0 to 1048576, else an error naming the key")
    func journalWrites() async throws {
        #expect(try await Settings.load(configFile: nil, environment: [:], flags: [:]).journalWrites == 16_384)
        let none = try await Settings.load(
            configFile: nil, environment: ["QUIRE_STORAGE_JOURNAL_WRITES": "0"], flags: [:])
        #expect(none.journalWrites == 0)
        for value in ["-1", "1048577"] {
            await #expect {
                try await Settings.load(
                    configFile: nil, environment: ["QUIRE_STORAGE_JOURNAL_WRITES": value], flags: [:])
            } throws: { error in
                "\(error)".contains("storage.journalWrites must be between 0 and 1048576")
            }
        }
    }

    @Test("a file overrides the defaults, the environment the file, flags the environment")
    func precedence() async throws {
        let path = try Self.file("server:\n  port: 9000\n  connectionLimit: 77\nlog:\n  format: json\n")
        let environment = ["QUIRE_SERVER_PORT": "9100", "QUIRE_SERVER_CONNECTION_LIMIT": "88", "OTHER_PORT": "1"]
        let fileOnly = try await Settings.load(configFile: path, environment: [:], flags: [:])
        #expect(fileOnly.service.http.port == 9000)
        #expect(fileOnly.service.http.connectionLimit == 77)
        #expect(fileOnly.logFormat == .json)
        #expect(fileOnly.service.http.maxBodyBytes == 1 << 20)
        let withEnvironment = try await Settings.load(configFile: path, environment: environment, flags: [:])
        #expect(withEnvironment.service.http.port == 9100)
        #expect(withEnvironment.service.http.connectionLimit == 88)
        let withFlags = try await Settings.load(
            configFile: path, environment: environment, flags: ["server.port": .int(9200)])
        #expect(withFlags.service.http.port == 9200)
        #expect(withFlags.service.http.connectionLimit == 88)
    }

    @Test("the write token from the environment or a flag")
    func writeToken() async throws {
        let fromEnvironment = try await Settings.load(
            configFile: nil, environment: ["QUIRE_AUTH_WRITE_TOKEN": "s3cret"], flags: [:])
        #expect(fromEnvironment.service.writeToken == "s3cret")
        let fromFlag = try await Settings.load(
            configFile: nil, environment: [:], flags: ["auth.writeToken": .string("t")])
        #expect(fromFlag.service.writeToken == "t")
    }

    @Test("values of the wrong type or out of range are errors")
    func invalidValues() async throws {
        await #expect(throws: (any Error).self) {
            try await Settings.load(configFile: nil, environment: ["QUIRE_SERVER_PORT": "eighty"], flags: [:])
        }
        await #expect(throws: SettingsError.self) {
            try await Settings.load(configFile: nil, environment: ["QUIRE_LOG_LEVEL": "loud"], flags: [:])
        }
        await #expect(throws: (any Error).self) {
            try await Settings.load(configFile: "/nonexistent/quire.yaml", environment: [:], flags: [:])
        }
        let broken = try Self.file("server: [port: 1\n")
        await #expect(throws: (any Error).self) {
            try await Settings.load(configFile: broken, environment: [:], flags: [:])
        }
    }

    @Test("listening beyond loopback needs a write token or JSON Web Tokens")
    func nonLoopbackNeedsToken() async throws {
        var settings = Settings()
        settings.service.http.host = "0.0.0.0"
        #expect(throws: SettingsError.self) { try settings.validateForServing() }
        settings.service.writeToken = "token"
        try settings.validateForServing()
        settings.service.writeToken = nil
        settings.service.jwt.jwksFile = "/etc/quire/jwks.json"
        try settings.validateForServing()
        for host in ["127.0.0.1", "localhost", "::1", "127.0.0.2"] {
            var local = Settings()
            local.service.http.host = host
            try local.validateForServing()
        }
    }

    @Test("server.tls.*: both files or neither; plain HTTP beyond loopback warns unless offloaded")
    func tlsSettings() async throws {
        let environment = [
            "QUIRE_SERVER_TLS_CERTIFICATE_FILE": "/c.pem", "QUIRE_SERVER_TLS_KEY_FILE": "/k.pem",
            "QUIRE_SERVER_TLS_KEY_PASSWORD": "pw",
        ]
        let settings = try await Settings.load(configFile: nil, environment: environment, flags: [:])
        #expect(
            settings.service.http.tls
                == TLSConfiguration(certificateFile: "/c.pem", keyFile: "/k.pem", keyPassword: "pw"))
        #expect(try await Settings.load(configFile: nil, environment: [:], flags: [:]).service.http.tls == nil)
        await #expect(throws: SettingsError.self) {
            try await Settings.load(configFile: nil, environment: ["QUIRE_SERVER_TLS_KEY_FILE": "/k.pem"], flags: [:])
        }
        var plain = Settings()
        plain.service.http.host = "0.0.0.0"
        // Reads closed and no demo (as `quire serve` resolves it beyond loopback): the plain HTTP warning alone.
        plain.service.readToken = "reader"
        plain.service.demo.seed = false
        #expect(plain.servingWarnings.count == 1)
        #expect(plain.servingWarnings.first?.contains("server.tls.offloaded") == true)
        plain.tlsOffloaded = true
        #expect(plain.servingWarnings.isEmpty)
        var secure = Settings()
        secure.service.http.host = "0.0.0.0"
        secure.service.http.tls = TLSConfiguration(certificateFile: "/c.pem", keyFile: "/k.pem")
        secure.service.readToken = "reader"
        secure.service.demo.seed = false
        #expect(secure.servingWarnings.isEmpty)
        #expect(Settings().servingWarnings.isEmpty)  // loopback
    }

    @Test(
        "beyond loopback the safe defaults: no demo, /metrics refused without its token; explicit settings win",
        arguments: ["0.0.0.0", "::", "10.1.2.3", "192.168.0.7", "::ffff:10.0.0.1"])
    func exposureDefaults(host: String) async throws {
        func load(_ environment: [String: String]) async throws -> Settings {
            try await Settings.load(
                configFile: nil, environment: ["QUIRE_SERVER_HOST": host].merging(environment) { $1 }, flags: [:])
        }
        let open = try await load([:])
        #expect(!open.service.demo.seed && !open.service.demo.page && !open.service.demo.live)
        #expect(open.service.metrics.access == .refused)
        #expect(open.service.metrics.listener == nil)
        let explicit = try await load([
            "QUIRE_DEMO_SEED": "true", "QUIRE_DEMO_LIVE": "true", "QUIRE_AUTH_METRICS_TOKEN": "m",
            "QUIRE_SERVER_METRICS_LISTENER_ENABLED": "true",
        ])
        #expect(explicit.service.demo.seed && explicit.service.demo.page && explicit.service.demo.live)
        #expect(
            explicit.service.metrics.access == .token("m") && explicit.service.metrics.listenerAccess == .token("m"))
        #expect(explicit.service.metrics.listener?.host == host && explicit.service.metrics.listener?.port == 9464)
        #expect(explicit.servingWarnings.contains { $0.hasPrefix("the demo list is seeded") })
        #expect(!explicit.servingWarnings.contains { $0.contains("metrics listener") }, "it needs the token")
        let listener = try await load(["QUIRE_SERVER_METRICS_LISTENER_ENABLED": "true"])
        #expect(listener.service.metrics.listenerAccess == .open && listener.service.metrics.access == .refused)
        #expect(listener.servingWarnings.contains { $0.contains("metrics listener") })
    }

    @Test("on loopback today's defaults: the demo and its page, /metrics open; demo.seed false keeps the page")
    func loopbackDefaults() async throws {
        for host in ["127.0.0.1", "localhost", "::1", "127.8.9.10", "::ffff:127.0.0.1"] {
            let settings = try await Settings.load(
                configFile: nil, environment: ["QUIRE_SERVER_HOST": host], flags: [:])
            #expect(settings.service.demo.seed && settings.service.demo.page, "\(host)")
            #expect(settings.service.metrics.access == .open, "\(host)")
            #expect(settings.servingWarnings.isEmpty, "\(host)")
        }
        let off = try await Settings.load(
            configFile: nil, environment: ["QUIRE_DEMO_SEED": "false", "QUIRE_DEMO_LIVE": "true"], flags: [:])
        #expect(!off.service.demo.seed && off.service.demo.page && off.service.demo.live)
    }

    @Test("server.cors.*: origins from the file or the environment (comma-separated), lower-cased, checked")
    func corsSettings() async throws {
        #expect(
            try await Settings.load(configFile: nil, environment: [:], flags: [:]).service.crossOrigin.allowedOrigins
                .isEmpty)
        let environment = [
            "QUIRE_SERVER_CORS_ALLOWED_ORIGINS": "https://App.example.com,http://127.0.0.1:3000",
            "QUIRE_SERVER_CORS_MAX_AGE": "600",
        ]
        let settings = try await Settings.load(configFile: nil, environment: environment, flags: [:])
        #expect(settings.service.crossOrigin.allowedOrigins == ["https://app.example.com", "http://127.0.0.1:3000"])
        #expect(settings.service.crossOrigin.maxAgeSeconds == 600)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("quire-cors-\(UUID()).yaml").path
        try "server:\n  cors:\n    allowedOrigins: [\"https://a.example\", \"http://[::1]:8081\"]\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fromFile = try await Settings.load(configFile: file, environment: [:], flags: [:])
        #expect(fromFile.service.crossOrigin.allowedOrigins == ["https://a.example", "http://[::1]:8081"])
        for origins in [
            "a.example", "https://a.example/", "ftp://a.example", "https://", "*,https://a.example", "https://a b",
        ] {
            await #expect(throws: SettingsError.self, "\(origins)") {
                try await Settings.load(
                    configFile: nil, environment: ["QUIRE_SERVER_CORS_ALLOWED_ORIGINS": origins], flags: [:])
            }
        }
        await #expect(throws: SettingsError.self) {
            try await Settings.load(configFile: nil, environment: ["QUIRE_SERVER_CORS_MAX_AGE": "-1"], flags: [:])
        }
    }

    @Test("auth.jwt.*: from the environment, empty strings unset, the secret checked for length")
    func jwtSettings() async throws {
        let environment = [
            "QUIRE_AUTH_JWT_SECRET": String(repeating: "s", count: 32), "QUIRE_AUTH_JWT_JWKS_FILE": "/k.json",
            "QUIRE_AUTH_JWT_ISSUER": "https://id.test", "QUIRE_AUTH_JWT_LEEWAY": "5",
        ]
        let settings = try await Settings.load(configFile: nil, environment: environment, flags: [:])
        #expect(settings.service.jwt.secret?.count == 32)
        #expect(settings.service.jwt.jwksFile == "/k.json")
        #expect(settings.service.jwt.issuer == "https://id.test")
        #expect(settings.service.jwt.audience == nil)
        #expect(settings.service.jwt.leewaySeconds == 5)
        #expect(try await Settings.load(configFile: nil, environment: [:], flags: [:]).service.jwt.isEnabled == false)
        await #expect(throws: SettingsError.self) {
            _ = try await Settings.load(configFile: nil, environment: ["QUIRE_AUTH_JWT_SECRET": "short"], flags: [:])
        }
    }

    @Test("quire health parses its URL")
    func healthTarget() {
        func parts(_ url: String) -> [String]? {
            HealthTarget(url).map { [$0.host, String($0.port), $0.path] }
        }
        #expect(parts("http://127.0.0.1:8080/healthz") == ["127.0.0.1", "8080", "/healthz"])
        #expect(parts("http://[::1]:81/h") == ["::1", "81", "/h"])
        #expect(parts("http://localhost") == ["localhost", "80", "/"])
        #expect(parts("https://x") == ["x", "443", "/"])
        #expect(parts("ftp://x") == nil)
        #expect(parts("http://x:99999/") == nil)
    }
}
