import ArgumentParser
import Configuration

/// The options that set settings, which `quire serve` and `quire config` share: the file and the flags that
/// override single keys (the last of the sources, after the environment).
struct SettingsOptions: ParsableArguments {
    @Option(name: .long, help: "A YAML configuration file (see config/quire.yaml).")
    var config: String?

    @Option(name: .long, help: "Address to bind (server.host).")
    var host: String?

    @Option(name: .long, help: "Port to listen on; 0 picks a free port (server.port).")
    var port: Int?

    @Option(name: .long, help: "Event-loop threads; 0 = one per core (server.threads).")
    var threads: Int?

    @Option(name: .long, help: "Bearer token required for writes (auth.writeToken).")
    var writeToken: String?

    @Option(name: .long, help: "The SQLite file that keeps the lists, or :memory: (storage.path).")
    var storage: String?

    @Option(name: .long, help: "Log level (log.level).")
    var logLevel: String?

    @Option(name: .long, help: "Log format, text or json (log.format).")
    var logFormat: String?

    @Option(name: .long, help: "Serve HTTPS with this PEM certificate chain (server.tls.certificateFile).")
    var tlsCertificate: String?

    @Option(name: .long, help: "The PEM private key of the certificate (server.tls.keyFile).")
    var tlsKey: String?

    /// The values the flags give, by key.
    var flagValues: [String: ConfigContent] {
        var values: [String: ConfigContent] = [:]
        if let host { values["server.host"] = .string(host) }
        if let port { values["server.port"] = .int(port) }
        if let threads { values["server.threads"] = .int(threads) }
        if let writeToken { values["auth.writeToken"] = .string(writeToken) }
        if let storage { values["storage.path"] = .string(storage) }
        if let logLevel { values["log.level"] = .string(logLevel) }
        if let logFormat { values["log.format"] = .string(logFormat) }
        if let tlsCertificate { values["server.tls.certificateFile"] = .string(tlsCertificate) }
        if let tlsKey { values["server.tls.keyFile"] = .string(tlsKey) }
        return values
    }
}
