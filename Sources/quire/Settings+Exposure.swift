import Configuration
import QuireAPI
import QuireAuth
import QuireHTTP

/// What a server open to the network shows, and to whom (docs/operations.md, "Public deployment"): the demo, `/metrics`,
/// the web origins allowed (`server.cors`), and the warnings at start for every door left open. On a loopback address
/// (`make run`, the tests, the load tools) the defaults are those of a development machine; on any other they are the
/// safe ones, and a setting given explicitly wins either way.
extension Settings {
    /// `demo.seed`: `true`, `false`, or `loopback` (the default: only on a loopback address).
    enum DemoSeed: String, CaseIterable {
        case always = "true"
        case never = "false"
        case loopback
    }

    /// The `server.cors.*` and `server.metricsListener.*` keys with their defaults, in the order of config/quire.yaml.
    static var exposureServerKeys: [(key: String, value: ConfigContent)] {
        let cors = QuireService.CrossOriginSettings()
        return [
            ("server.cors.allowedOrigins", .stringArray(cors.allowedOrigins)),
            ("server.cors.maxAge", .int(cors.maxAgeSeconds)),
            ("server.metricsListener.enabled", .bool(false)),
            ("server.metricsListener.host", .string("")),
            ("server.metricsListener.port", .int(defaultMetricsPort)),
        ]
    }

    /// The metrics listener's port by default: the one Prometheus's registry of default ports gives no exporter
    /// conflicting with it, and OpenTelemetry's Prometheus exporter uses.
    static let defaultMetricsPort = 9464

    /// Reads `demo.seed`.
    static func demoSeed(_ config: ConfigReader) throws -> DemoSeed {
        let text = try config.requiredString(forKey: "demo.seed")
        guard let seed = DemoSeed(rawValue: text.lowercased()) else {
            throw SettingsError("demo.seed must be true, false or loopback, not '\(text)'")
        }
        return seed
    }

    /// Reads `auth.metricsToken`, `server.metricsListener.*` and `server.cors.*`, then resolves against the address
    /// bound what depends on it: the demo, and who may read `/metrics`. Called once `server.*`, `auth.*` and
    /// `demo.*` are read.
    ///
    /// - Throws: ``SettingsError`` naming the key.
    mutating func readExposure(_ config: ConfigReader) throws {
        let token = try config.requiredString(forKey: "auth.metricsToken", isSecret: true)
        metricsToken = token.isEmpty ? nil : token
        let loopback = service.http.bindsLoopback
        service.demo.seed = demoSeed == .always || (demoSeed == .loopback && loopback)
        service.demo.page = service.demo.seed || loopback
        // A live demo changes the demo list, which a server open to the network then does not have.
        if !loopback && !service.demo.seed { service.demo.live = false }
        service.metrics.access = metricsToken.map { .token($0) } ?? (loopback ? .open : .refused)
        service.metrics.listenerAccess = metricsToken.map { .token($0) } ?? .open
        if try config.requiredBool(forKey: "server.metricsListener.enabled") {
            var listener = HTTPServer.Configuration()
            let host = try config.requiredString(forKey: "server.metricsListener.host")
            listener.host = host.isEmpty ? service.http.host : host
            listener.port = try config.requiredInt(forKey: "server.metricsListener.port")
            guard (0...65535).contains(listener.port) else {
                throw SettingsError("server.metricsListener.port must be from 0 to 65535, not \(listener.port)")
            }
            // A scrape or a probe at a time, from inside the network: a thread and a few connections are plenty.
            listener.threads = 1
            listener.connectionLimit = 64
            listener.compression = service.http.compression
            service.metrics.listener = listener
        }
        service.crossOrigin.allowedOrigins = try Self.allowedOrigins(config)
        service.crossOrigin.maxAgeSeconds = try config.requiredInt(forKey: "server.cors.maxAge")
        guard (0...86_400).contains(service.crossOrigin.maxAgeSeconds) else {
            throw SettingsError("server.cors.maxAge must be from 0 to 86400 seconds")
        }
    }

    /// `server.cors.allowedOrigins`: each an origin as a browser sends it (`https://app.example.com`,
    /// `http://127.0.0.1:3000`: a scheme, a host, a port, no path), lower-cased; or `*` alone.
    private static func allowedOrigins(_ config: ConfigReader) throws -> [String] {
        let origins = try config.requiredStringArray(forKey: "server.cors.allowedOrigins").map { $0.lowercased() }
        if origins.contains("*") {
            guard origins.count == 1 else {
                throw SettingsError("server.cors.allowedOrigins: * allows every origin, so it stands alone")
            }
            return origins
        }
        for origin in origins {
            let rest =
                origin.hasPrefix("https://")
                ? origin.dropFirst(8) : origin.hasPrefix("http://") ? origin.dropFirst(7) : nil
            let valid =
                rest.map { host in
                    !host.isEmpty && !host.hasSuffix(":")
                        && host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]".contains($0)) }
                } ?? false
            guard valid else {
                throw SettingsError(
                    "server.cors.allowedOrigins: '\(origin)' is not an origin (scheme://host[:port], no path, as "
                        + "https://app.example.com)")
            }
        }
        return origins
    }

    /// What the operator should hear at start: every door a server open to the network leaves open (reads without
    /// a token, plain HTTP with no TLS proxy declared, the demo list, `/metrics` without a token). None on a loopback
    /// address.
    var servingWarnings: [String] {
        var warnings: [String] = []
        let http = service.http
        guard !http.bindsLoopback else { return warnings }
        if http.tls == nil, !tlsOffloaded {
            warnings.append(
                "serving plain HTTP on \(http.host): phones refuse cleartext (iOS App Transport Security, "
                    + "Android 9+); set server.tls.certificateFile and server.tls.keyFile, or server.tls.offloaded: "
                    + "true when a TLS proxy is in front")
        }
        if service.readToken == nil, !service.jwt.isEnabled {
            warnings.append(
                "reads need no token on \(http.host): anyone who reaches it can list and read every list and open "
                    + "sessions; set auth.readToken, or auth.jwt for a token per user (docs/operations.md, "
                    + "\"Public deployment\")")
        }
        if service.demo.seed {
            warnings.append(
                "the demo list is seeded on \(http.host) (demo.seed: true) and /demo is served; set demo.seed: "
                    + "loopback (the default) to keep them off a server open to the network")
        }
        if let listener = service.metrics.listener, metricsToken == nil, !listener.bindsLoopback {
            warnings.append(
                "GET /metrics needs no token on the metrics listener, \(listener.host):\(listener.port): keep that "
                    + "port inside the network (a firewall, a network policy), or set auth.metricsToken")
        }
        return warnings
    }
}
