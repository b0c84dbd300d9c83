import Configuration
import Logging
import QuireAPI
import QuireHTTP
import SystemPackage

/// Every setting of `quire serve`: read from the embedded defaults, then a YAML file (`--config`), then
/// `QUIRE_*` environment variables, then command-line flags, the later winning.
///
/// Keys are dotted (`server.port`); the environment spells them upper-case with underscores after the
/// `QUIRE_` prefix (`QUIRE_SERVER_PORT`, `QUIRE_SERVER_CONNECTION_LIMIT`). `config/quire.yaml` lists every
/// key with its default, and a test keeps it equal to ``defaultValues``.
struct Settings: Equatable {
    var service = QuireService.Configuration()
    var logLevel: Logger.Level = .info
    var logFormat: LogFormat = .text

    enum LogFormat: String, Equatable, CaseIterable {
        /// Human-readable lines.
        case text
        /// One JSON object per line.
        case json
    }

    /// Every key with its default, in documentation order: (key, default, description).
    static let keys: [(key: String, value: ConfigContent, summary: String)] = {
        let http = HTTPServer.Configuration()
        return [
            ("server.host", .string(http.host), "Address to bind (IPv4/IPv6 literal or localhost)."),
            ("server.port", .int(http.port), "TCP port; 0 picks a free one."),
            ("server.threads", .int(0), "Event-loop threads; 0 means one per core."),
            ("server.connectionLimit", .int(http.connectionLimit), "Connections open at once."),
            (
                "server.perIpConnectionLimit", .int(http.perIPConnectionLimit),
                "Connections per client IP; 0 = no limit."
            ),
            (
                "server.connectionTimeout", .int(http.connectionTimeoutSeconds),
                "Seconds of inactivity before a connection is closed."
            ),
            ("server.maxBodyBytes", .int(http.maxBodyBytes), "Largest request body; larger gets 413."),
            (
                "server.connectionMemoryBytes", .int(http.connectionMemoryBytes),
                "Per-connection memory for the request line and headers."
            ),
            (
                "server.drainTimeout", .double(http.drainTimeoutSeconds),
                "Seconds in-flight requests get to finish on shutdown."
            ),
            (
                "auth.writeToken", .string(""),
                "Bearer token required for writes; empty = writes are open (loopback only)."
            ),
            ("log.level", .string("info"), "trace, debug, info, notice, warning, error or critical."),
            ("log.format", .string("text"), "text (human-readable) or json (one object per line)."),
        ]
    }()

    static var defaultValues: [AbsoluteConfigKey: ConfigValue] {
        Dictionary(
            uniqueKeysWithValues: keys.map {
                (
                    AbsoluteConfigKey($0.key.split(separator: ".").map(String.init)),
                    ConfigValue($0.value, isSecret: false)
                )
            })
    }

    /// Loads the settings from every source.
    ///
    /// - Parameters:
    ///   - configFile: a YAML file, or `nil` for the embedded defaults alone.
    ///   - environment: the process environment; only `QUIRE_*` variables are read.
    ///   - flags: values given on the command line, by key.
    /// - Throws: ``SettingsError`` naming the key, or the file's parse error.
    static func load(
        configFile: String?, environment: [String: String], flags: [String: ConfigContent]
    ) async throws -> Settings {
        var providers: [any ConfigProvider] = []
        let flagValues = Dictionary(
            uniqueKeysWithValues: flags.map {
                (
                    AbsoluteConfigKey($0.key.split(separator: ".").map(String.init)),
                    ConfigValue($0.value, isSecret: $0.key == "auth.writeToken")
                )
            })
        providers.append(InMemoryProvider(name: "flags", values: flagValues))
        var prefixed: [String: String] = [:]
        for (name, value) in environment where name.hasPrefix("QUIRE_") {
            prefixed[String(name.dropFirst("QUIRE_".count))] = value
        }
        providers.append(
            EnvironmentVariablesProvider(
                environmentVariables: prefixed, secretsSpecifier: .specific(["AUTH_WRITE_TOKEN"])))
        if let configFile {
            providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(configFile)))
        }
        providers.append(InMemoryProvider(name: "defaults", values: defaultValues))
        return try Settings(reader: ConfigReader(providers: providers))
    }

    init() {}

    init(reader config: ConfigReader) throws {
        var http = HTTPServer.Configuration()
        http.host = try config.requiredString(forKey: "server.host")
        http.port = try config.requiredInt(forKey: "server.port")
        let threads = try config.requiredInt(forKey: "server.threads")
        http.threads = threads == 0 ? HTTPServer.Configuration.coreCount : threads
        http.connectionLimit = try config.requiredInt(forKey: "server.connectionLimit")
        http.perIPConnectionLimit = try config.requiredInt(forKey: "server.perIpConnectionLimit")
        http.connectionTimeoutSeconds = try config.requiredInt(forKey: "server.connectionTimeout")
        http.maxBodyBytes = try config.requiredInt(forKey: "server.maxBodyBytes")
        http.connectionMemoryBytes = try config.requiredInt(forKey: "server.connectionMemoryBytes")
        http.drainTimeoutSeconds = try config.requiredDouble(forKey: "server.drainTimeout")
        service.http = http
        let token = try config.requiredString(forKey: "auth.writeToken", isSecret: true)
        service.writeToken = token.isEmpty ? nil : token
        let level = try config.requiredString(forKey: "log.level")
        guard let logLevel = Logger.Level(rawValue: level) else {
            throw SettingsError(
                "log.level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), not '\(level)'"
            )
        }
        self.logLevel = logLevel
        let format = try config.requiredString(forKey: "log.format")
        guard let logFormat = LogFormat(rawValue: format) else {
            throw SettingsError("log.format must be text or json, not '\(format)'")
        }
        self.logFormat = logFormat
    }

    /// Refuses what would be unsafe to run: an open write API on a non-loopback address.
    func validateForServing() throws {
        let host = service.http.host
        let loopback = host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
        if !loopback && service.writeToken == nil {
            throw SettingsError(
                "refusing to listen on \(host) without a write token: set auth.writeToken (QUIRE_AUTH_WRITE_TOKEN or --write-token)"
            )
        }
    }
}

/// A setting that cannot be used, with a message for the operator.
struct SettingsError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
