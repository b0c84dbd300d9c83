import Configuration
import Logging
import QuireAPI
import QuireAuth
import QuireCore
import QuireHTTP
import QuireSources
import QuireStore

#if PostgreSQL
    import QuirePostgres
#endif

/// Every setting of `quire serve`: read from the embedded defaults, then a YAML file (`--config`), then
/// `QUIRE_*` environment variables, then command-line flags, the later winning.
///
/// Keys are dotted (`server.port`); the environment spells them upper-case with underscores after the
/// `QUIRE_` prefix (`QUIRE_SERVER_PORT`, `QUIRE_SERVER_CONNECTION_LIMIT`). `config/quire.yaml` lists every
/// key with its default, and a test keeps it equal to `quire config --defaults` (``defaultValues``).
struct Settings: Equatable {
    var service = QuireService.Configuration()
    var logLevel: Logger.Level = .info
    var logFormat: LogFormat = .text
    /// The SQLite file that keeps every list (`storage.path`); `:memory:` keeps them in memory only.
    var storagePath = Settings.defaultStoragePath
    /// Writes held in the SQLite file's journal of writes before their rows are applied (`storage.journalWrites`).
    var journalWrites = SQLiteListStore.defaultJournalLimit
    #if PostgreSQL
        /// `storage.kind: postgres`: the shared store of a cluster (`storage.url`, …), instead of the SQLite file.
        var postgres: PostgresSettings?
    #endif
    /// A TLS proxy in front terminates HTTPS (`server.tls.offloaded`): plain HTTP beyond loopback is meant.
    var tlsOffloaded = false
    /// When the demo list is seeded (`demo.seed`): resolved into `service.demo` against the address bound.
    var demoSeed = DemoSeed.loopback
    /// The bearer token `/metrics` needs (`auth.metricsToken`), `nil` when none is set.
    var metricsToken: String?
    /// The tables of the app's own PostgreSQL that lists are kept from (`sources:`, a list in the configuration file
    /// only: docs/operations.md, "Sources"). Read, then checked against their databases before the service starts.
    var sources: [SourceConfiguration] = []

    /// Where `make run` keeps its lists: a file under `data/`, relative to the working directory.
    static let defaultStoragePath = "data/quire.sqlite"

    /// `text` (human-readable lines) or `json` (one object per line).
    typealias LogFormat = QuireAPI.LogFormat
    /// The access log's buffer (`log.accessBuffer`, bytes): lines past it are dropped and counted while
    /// standard error cannot keep up.
    var accessLogBuffer = BufferedAccessLog.defaultCapacity

    /// Every key with its default, in the order of config/quire.yaml (which documents each): the order and nesting
    /// `quire config` prints them in.
    static let keys: [(key: String, value: ConfigContent)] = {
        let http = HTTPServer.Configuration()
        let limits = ListLimits()
        let (pages, sessions) = (QuireService.PageSettings(), QuireService.SessionSettings())
        let (longPolls, demo) = (QuireService.LongPollSettings(), QuireService.DemoSettings())
        let events = QuireService.EventSettings()
        let jwt = TokenSettings()
        let cache = CachePolicy()
        return [
            ("server.host", .string(http.host)),
            ("server.port", .int(http.port)),
            ("server.threads", .int(0)),
            ("server.connectionLimit", .int(http.connectionLimit)),
            ("server.perIpConnectionLimit", .int(http.perIPConnectionLimit)),
            ("server.connectionTimeout", .int(http.connectionTimeoutSeconds)),
            ("server.requestTimeout", .double(http.requestTimeoutSeconds)),
            ("server.maxBodyBytes", .int(http.maxBodyBytes)),
            ("server.connectionMemoryBytes", .int(http.connectionMemoryBytes)),
            ("server.drainTimeout", .double(http.drainTimeoutSeconds)),
            ("server.compression.enabled", .bool(http.compression.enabled)),
            ("server.compression.minimumBytes", .int(http.compression.minimumBytes)),
            ("server.compression.level", .int(http.compression.level)),
            ("server.cache.listMaxAge", .int(cache.listMaxAge)),
            ("server.cache.listStaleWhileRevalidate", .int(cache.listStaleWhileRevalidate)),
            ("server.cache.openapiMaxAge", .int(cache.documentMaxAge)),
            ("server.tls.certificateFile", .string("")),
            ("server.tls.keyFile", .string("")),
            ("server.tls.keyPassword", .string("")),
            ("server.tls.priorities", .string(TLSConfiguration.defaultPriorities)),
            ("server.tls.offloaded", .bool(false)),
        ] + exposureServerKeys + [
            ("auth.writeToken", .string("")),
            ("auth.readToken", .string("")),
            ("auth.metricsToken", .string("")),
            ("auth.jwt.secret", .string("")),
            ("auth.jwt.jwksFile", .string("")),
            ("auth.jwt.issuer", .string("")),
            ("auth.jwt.audience", .string("")),
            ("auth.jwt.leeway", .double(jwt.leewaySeconds)),
            ("auth.jwt.cacheEntries", .int(jwt.cacheEntries)),
            ("storage.kind", .string("sqlite")),
            ("storage.path", .string(defaultStoragePath)),
            ("storage.url", .string("")),
            ("storage.poolSize", .int(StorageDefaults.poolSize)),
            ("storage.statementTimeout", .double(StorageDefaults.statementTimeoutSeconds)),
            ("storage.logRetention", .int(StorageDefaults.logRetention)),
            ("storage.journalWrites", .int(SQLiteListStore.defaultJournalLimit)),
            ("cluster.instance", .string("")),
            ("limits.maxItems", .int(limits.maxItems)),
            ("limits.maxSections", .int(limits.maxSections)),
            ("limits.maxIdLength", .int(limits.maxIDLength)),
            ("limits.maxTypeLength", .int(limits.maxTypeLength)),
            ("limits.maxDataBytes", .int(limits.maxDataBytes)),
            ("limits.maxDepth", .int(limits.maxDepth)),
            ("pages.defaultLimit", .int(pages.defaultLimit)),
            ("pages.maxLimit", .int(pages.maxLimit)),
            ("pages.cacheEntries", .int(pages.cacheEntries)),
            ("lists.memoryBytes", .int(QuireService.ListSettings().memoryBytes)),
            ("lists.idleSeconds", .double(QuireService.ListSettings().idleSeconds)),
            ("sessions.capacity", .int(sessions.capacity)),
            ("sessions.idleTimeout", .double(sessions.idleSeconds)),
            ("sessions.resetShare", .double(sessions.resetShare)),
            ("sessions.maxKeep", .int(sessions.maxKeep)),
            ("longPoll.maxWait", .double(longPolls.maxWaitSeconds)),
            ("longPoll.maxWaiters", .int(longPolls.maxWaiters)),
            ("events.maxStreams", .int(events.maxStreams)),
            ("events.heartbeatInterval", .double(events.heartbeatSeconds)),
        ] + rateLimitKeys + [
            ("demo.seed", .string(DemoSeed.loopback.rawValue)),
            ("demo.live", .bool(demo.live)),
            ("demo.interval", .double(demo.intervalSeconds)),
            ("log.level", .string("info")),
            ("log.format", .string("text")),
            ("log.access", .bool(true)),
            ("log.accessBuffer", .int(BufferedAccessLog.defaultCapacity)),
        ]
    }()

    /// Keys whose values are never printed.
    static let secretKeys: Set<String> = [
        "auth.writeToken", "auth.readToken", "auth.metricsToken", "auth.jwt.secret", "server.tls.keyPassword",
        "storage.url",
    ]

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
    /// - Throws: ``SettingsError`` naming the key, `SourceConfigurationError` naming the source and its key, or the
    ///   file's parse error.
    static func load(
        configFile: String?, environment: [String: String], flags: [String: ConfigContent]
    ) async throws -> Settings {
        try Settings(await input(configFile: configFile, environment: environment, flags: flags))
    }

    /// What the settings are read from: the keys, through swift-configuration, and the file's `sources:` list, which
    /// is not a key (see ``SettingsFile``).
    struct Input {
        /// Flags, then `QUIRE_*` environment variables, then the file, then the embedded defaults.
        let reader: ConfigReader
        /// The file's `sources:`, `nil` without a file or without the key.
        let sources: JSONValue?
        /// The process environment, where a source's URL may be (`QUIRE_SOURCES_<NAME>_URL`).
        let environment: [String: String]
    }

    /// The sources of the settings, the later winning: flags, then `QUIRE_*` environment variables, then the file,
    /// then the embedded defaults. `quire serve` reads its ``Settings`` from it, and `quire config` prints it.
    ///
    /// - Throws: the file's read or parse error.
    static func input(
        configFile: String?, environment: [String: String], flags: [String: ConfigContent]
    ) async throws -> Input {
        var providers: [any ConfigProvider] = []
        let flagValues = Dictionary(
            uniqueKeysWithValues: flags.map {
                (
                    AbsoluteConfigKey($0.key.split(separator: ".").map(String.init)),
                    ConfigValue($0.value, isSecret: secretKeys.contains($0.key))
                )
            })
        providers.append(InMemoryProvider(name: "flags", values: flagValues))
        var prefixed: [String: String] = [:]
        for (name, value) in environment where name.hasPrefix("QUIRE_") {
            prefixed[String(name.dropFirst("QUIRE_".count))] = value
        }
        providers.append(
            EnvironmentVariablesProvider(
                environmentVariables: prefixed,
                secretsSpecifier: .specific([
                    "AUTH_WRITE_TOKEN", "AUTH_READ_TOKEN", "AUTH_METRICS_TOKEN", "AUTH_JWT_SECRET",
                    "SERVER_TLS_KEY_PASSWORD",
                ])))
        var sources: JSONValue?
        if let configFile {
            let file = try SettingsFile(path: configFile)
            sources = file.sources
            providers.append(file)
        }
        providers.append(InMemoryProvider(name: "defaults", values: defaultValues))
        return Input(reader: ConfigReader(providers: providers), sources: sources, environment: environment)
    }

    /// The settings of `input`: its keys, then its sources, checked against the lists' limits they read.
    ///
    /// - Throws: ``SettingsError`` naming the key, or `SourceConfigurationError` naming the source and its key.
    init(_ input: Input) throws {
        try self.init(reader: input.reader)
        sources = try SourceConfiguration.all(
            in: input.sources, environment: input.environment, limits: service.limits)
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
        http.requestTimeoutSeconds = try config.requiredDouble(forKey: "server.requestTimeout")
        http.maxBodyBytes = try config.requiredInt(forKey: "server.maxBodyBytes")
        http.connectionMemoryBytes = try config.requiredInt(forKey: "server.connectionMemoryBytes")
        http.drainTimeoutSeconds = try config.requiredDouble(forKey: "server.drainTimeout")
        http.compression.enabled = try config.requiredBool(forKey: "server.compression.enabled")
        http.compression.minimumBytes = try config.requiredInt(forKey: "server.compression.minimumBytes")
        http.compression.level = try config.requiredInt(forKey: "server.compression.level")
        service.cache.listMaxAge = try config.requiredInt(forKey: "server.cache.listMaxAge")
        service.cache.listStaleWhileRevalidate = try config.requiredInt(forKey: "server.cache.listStaleWhileRevalidate")
        service.cache.documentMaxAge = try config.requiredInt(forKey: "server.cache.openapiMaxAge")
        http.tls = try Self.tls(config)
        tlsOffloaded = try config.requiredBool(forKey: "server.tls.offloaded")
        service.http = http
        service.limits = ListLimits(
            maxItems: try config.requiredInt(forKey: "limits.maxItems"),
            maxSections: try config.requiredInt(forKey: "limits.maxSections"),
            maxIDLength: try config.requiredInt(forKey: "limits.maxIdLength"),
            maxTypeLength: try config.requiredInt(forKey: "limits.maxTypeLength"),
            maxDataBytes: try config.requiredInt(forKey: "limits.maxDataBytes"),
            maxDepth: try config.requiredInt(forKey: "limits.maxDepth"))
        service.pages.defaultLimit = try config.requiredInt(forKey: "pages.defaultLimit")
        service.pages.maxLimit = try config.requiredInt(forKey: "pages.maxLimit")
        service.pages.cacheEntries = try config.requiredInt(forKey: "pages.cacheEntries")
        service.lists.memoryBytes = try config.requiredInt(forKey: "lists.memoryBytes")
        service.lists.idleSeconds = try config.requiredDouble(forKey: "lists.idleSeconds")
        service.sessions.capacity = try config.requiredInt(forKey: "sessions.capacity")
        service.sessions.idleSeconds = try config.requiredDouble(forKey: "sessions.idleTimeout")
        service.sessions.resetShare = try config.requiredDouble(forKey: "sessions.resetShare")
        service.sessions.maxKeep = try config.requiredInt(forKey: "sessions.maxKeep")
        service.longPolls.maxWaitSeconds = try config.requiredDouble(forKey: "longPoll.maxWait")
        service.longPolls.maxWaiters = try config.requiredInt(forKey: "longPoll.maxWaiters")
        service.events.maxStreams = try config.requiredInt(forKey: "events.maxStreams")
        service.events.heartbeatSeconds = try config.requiredDouble(forKey: "events.heartbeatInterval")
        service.rateLimits = try Self.rateLimits(config)
        demoSeed = try Self.demoSeed(config)
        service.demo.live = try config.requiredBool(forKey: "demo.live")
        service.demo.intervalSeconds = try config.requiredDouble(forKey: "demo.interval")
        try Self.check(service)
        let token = try config.requiredString(forKey: "auth.writeToken", isSecret: true)
        service.writeToken = token.isEmpty ? nil : token
        let readToken = try config.requiredString(forKey: "auth.readToken", isSecret: true)
        service.readToken = readToken.isEmpty ? nil : readToken
        service.jwt = try Self.tokenSettings(config)
        try readExposure(config)
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
        service.accessLog = try config.requiredBool(forKey: "log.access")
        accessLogBuffer = try config.requiredInt(forKey: "log.accessBuffer")
        guard (4096...(1 << 30)).contains(accessLogBuffer) else {
            throw SettingsError("log.accessBuffer must be between 4096 and 1073741824 bytes, not \(accessLogBuffer)")
        }
        storagePath = try config.requiredString(forKey: "storage.path")
        guard !storagePath.isEmpty else { throw SettingsError("storage.path must not be empty") }
        journalWrites = try config.requiredInt(forKey: "storage.journalWrites")
        guard (0...(1 << 20)).contains(journalWrites) else {
            throw SettingsError("storage.journalWrites must be between 0 and 1048576, not \(journalWrites)")
        }
        #if PostgreSQL
            postgres = try Self.postgres(config)
        #else
            try Self.refusePostgres(config)
        #endif
        let instance = try config.requiredString(forKey: "cluster.instance")
        if !instance.isEmpty {
            guard SessionID.isValidInstance(instance) else {
                throw SettingsError("cluster.instance must be 1 to 16 ASCII letters and digits, not '\(instance)'")
            }
            service.instance = instance
        }
    }

    /// The defaults of the shared store's keys (`storage.poolSize`, …): those of ``PostgresSettings``, written here too
    /// because a server built without the `PostgreSQL` trait (`make run`) still knows every key of
    /// `config/quire.yaml`; a test keeps the two equal.
    enum StorageDefaults {
        static let poolSize = 16
        static let statementTimeoutSeconds = 5.0
        static let logRetention = 100_000
    }

    #if PostgreSQL
        /// `storage.kind` and, for `postgres`, `storage.url` and the pool's settings.
        private static func postgres(_ config: ConfigReader) throws -> PostgresSettings? {
            let kind = try config.requiredString(forKey: "storage.kind")
            switch kind {
            case "sqlite":
                return nil
            case "postgres":
                let url = try config.requiredString(forKey: "storage.url", isSecret: true)
                guard !url.isEmpty else {
                    throw SettingsError(
                        "storage.kind is postgres but storage.url is not set (postgres://user@host:port/db)")
                }
                var settings: PostgresSettings
                do {
                    settings = try PostgresSettings(url: url)
                } catch {
                    throw SettingsError("storage.url: \(error)")
                }
                settings.poolSize = try config.requiredInt(forKey: "storage.poolSize")
                settings.statementTimeoutSeconds = try config.requiredDouble(forKey: "storage.statementTimeout")
                settings.logRetention = try config.requiredInt(forKey: "storage.logRetention")
                guard (1...256).contains(settings.poolSize) else {
                    throw SettingsError("storage.poolSize must be between 1 and 256, not \(settings.poolSize)")
                }
                guard settings.statementTimeoutSeconds >= 0.1 else {
                    throw SettingsError("storage.statementTimeout must be at least 0.1 seconds")
                }
                guard settings.logRetention >= 100 else {
                    throw SettingsError("storage.logRetention must be at least 100 changes")
                }
                return settings
            default:
                throw SettingsError("storage.kind must be sqlite or postgres, not '\(kind)'")
            }
        }

    #else
        /// `storage.kind`: `sqlite`, or `postgres` refused with the reason (this build has no PostgreSQL client).
        private static func refusePostgres(_ config: ConfigReader) throws {
            let kind = try config.requiredString(forKey: "storage.kind")
            switch kind {
            case "sqlite":
                return
            case "postgres":
                throw SettingsError(
                    "storage.kind is postgres, but this quire was built without PostgreSQL (`make run` builds the server "
                        + "for the embedded default, SQLite): build it with `make build-release` (.build/release/quire) "
                        + "or use the container")
            default:
                throw SettingsError("storage.kind must be sqlite or postgres, not '\(kind)'")
            }
        }
    #endif

    /// `server.tls.*`: HTTPS when both files are named, plain HTTP when neither is.
    private static func tls(_ config: ConfigReader) throws -> TLSConfiguration? {
        let certificate = try config.requiredString(forKey: "server.tls.certificateFile")
        let key = try config.requiredString(forKey: "server.tls.keyFile")
        let password = try config.requiredString(forKey: "server.tls.keyPassword", isSecret: true)
        let priorities = try config.requiredString(forKey: "server.tls.priorities")
        switch (certificate.isEmpty, key.isEmpty) {
        case (true, true):
            return nil
        case (false, true):
            throw SettingsError("server.tls.certificateFile is set but server.tls.keyFile is not: HTTPS needs both")
        case (true, false):
            throw SettingsError("server.tls.keyFile is set but server.tls.certificateFile is not: HTTPS needs both")
        case (false, false):
            guard !priorities.isEmpty else { throw SettingsError("server.tls.priorities must not be empty") }
            return TLSConfiguration(
                certificateFile: certificate, keyFile: key, keyPassword: password.isEmpty ? nil : password,
                priorities: priorities)
        }
    }

    /// `auth.jwt.*`; empty strings are unset.
    static func tokenSettings(_ config: ConfigReader) throws -> TokenSettings {
        func optional(_ key: ConfigKey, isSecret: Bool = false) throws -> String? {
            let value = try config.requiredString(forKey: key, isSecret: isSecret)
            return value.isEmpty ? nil : value
        }
        var jwt = TokenSettings()
        jwt.secret = try optional("auth.jwt.secret", isSecret: true)
        jwt.jwksFile = try optional("auth.jwt.jwksFile")
        jwt.issuer = try optional("auth.jwt.issuer")
        jwt.audience = try optional("auth.jwt.audience")
        jwt.leewaySeconds = try config.requiredDouble(forKey: "auth.jwt.leeway")
        jwt.cacheEntries = try config.requiredInt(forKey: "auth.jwt.cacheEntries")
        if let secret = jwt.secret, secret.utf8.count < TokenSettings.minimumSecretBytes {
            throw SettingsError(
                "auth.jwt.secret must be at least \(TokenSettings.minimumSecretBytes) bytes (it has \(secret.utf8.count))"
            )
        }
        guard (0...3600).contains(jwt.leewaySeconds) else {
            throw SettingsError("auth.jwt.leeway must be from 0 to 3600")
        }
        guard jwt.cacheEntries >= 1 else { throw SettingsError("auth.jwt.cacheEntries must be at least 1") }
        return jwt
    }

    /// Refuses values out of range, naming the key.
    static func check(_ service: QuireService.Configuration) throws {
        let checks: [(Bool, String)] = [
            (service.limits.maxItems >= 1, "limits.maxItems must be at least 1"),
            (service.limits.maxSections >= 1, "limits.maxSections must be at least 1"),
            (service.limits.maxIDLength >= 1, "limits.maxIdLength must be at least 1"),
            (service.limits.maxTypeLength >= 1, "limits.maxTypeLength must be at least 1"),
            (service.limits.maxDataBytes >= 4, "limits.maxDataBytes must be at least 4"),
            (service.limits.maxDepth >= 0, "limits.maxDepth must not be negative"),
            ((1...100_000).contains(service.pages.maxLimit), "pages.maxLimit must be from 1 to 100000"),
            (
                (1...service.pages.maxLimit).contains(service.pages.defaultLimit),
                "pages.defaultLimit must be from 1 to pages.maxLimit"
            ),
            (service.pages.cacheEntries >= 1, "pages.cacheEntries must be at least 1"),
            ((1...9).contains(service.http.compression.level), "server.compression.level must be from 1 to 9"),
            (service.http.compression.minimumBytes >= 0, "server.compression.minimumBytes must not be negative"),
            (service.cache.listMaxAge >= 0, "server.cache.listMaxAge must not be negative"),
            (
                service.cache.listStaleWhileRevalidate >= 0,
                "server.cache.listStaleWhileRevalidate must not be negative"
            ),
            (service.cache.documentMaxAge >= 0, "server.cache.openapiMaxAge must not be negative"),
            (service.lists.memoryBytes >= 0, "lists.memoryBytes must not be negative"),
            (service.lists.idleSeconds >= 0, "lists.idleSeconds must not be negative"),
            (service.sessions.capacity >= 1, "sessions.capacity must be at least 1"),
            (service.sessions.idleSeconds > 0, "sessions.idleTimeout must be positive"),
            (service.sessions.resetShare > 0, "sessions.resetShare must be positive"),
            (
                service.sessions.maxKeep == 0 || service.sessions.maxKeep >= service.pages.maxLimit,
                "sessions.maxKeep must be 0 (no cap) or at least pages.maxLimit"
            ),
            (service.longPolls.maxWaitSeconds >= 0, "longPoll.maxWait must not be negative"),
            (service.longPolls.maxWaiters >= 0, "longPoll.maxWaiters must not be negative"),
            (service.events.maxStreams >= 0, "events.maxStreams must not be negative"),
            (
                service.events.heartbeatSeconds >= 0.05 && service.events.heartbeatSeconds <= 3600,
                "events.heartbeatInterval must be from 0.05 to 3600 seconds"
            ),
            (service.demo.intervalSeconds >= 0.1, "demo.interval must be at least 0.1"),
        ]
        if let failed = checks.first(where: { !$0.0 }) {
            throw SettingsError(failed.1)
        }
    }

    /// Refuses what would be unsafe to run: an open write API on a non-loopback address (neither a write
    /// token nor JSON Web Tokens configured), and a TLS
    /// certificate or key that cannot be used (missing, unreadable, not PEM, not a pair).
    ///
    /// - Returns: the certificate's summary when serving HTTPS.
    @discardableResult
    func validateForServing() throws -> TLSCertificateSummary? {
        let host = service.http.host
        if !isLoopback && service.writeToken == nil && !service.jwt.isEnabled {
            throw SettingsError(
                "refusing to listen on \(host) without a write token or JSON Web Tokens: set auth.writeToken (QUIRE_AUTH_WRITE_TOKEN or --write-token), or auth.jwt.secret or auth.jwt.jwksFile"
            )
        }
        guard let tls = service.http.tls else { return nil }
        return try HTTPServer.check(tls)
    }

    private var isLoopback: Bool { service.http.bindsLoopback }
}

/// A setting that cannot be used, with a message for the operator.
struct SettingsError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
