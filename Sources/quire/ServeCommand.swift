import ArgumentParser
import Foundation
import Logging
import QuireAPI
import QuireAuth
import QuireCore
import QuireHTTP
import QuireSources
import QuireStore

/// `quire serve`: starts the service, reloads its TLS certificate and re-reads its JWKS file on SIGHUP, and
/// stops it gracefully on SIGINT or SIGTERM.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Start the HTTP service (settings: embedded defaults < --config file < QUIRE_* environment < flags)."
    )

    @OptionGroup var options: SettingsOptions

    func run() throws {
        let settings: Settings
        let keys: TokenKeys
        do {
            let (config, flags) = (options.config, options.flagValues)
            (settings, keys) = try runBlocking {
                let settings = try await Settings.load(
                    configFile: config, environment: ProcessInfo.processInfo.environment, flags: flags)
                return (settings, try await TokenKeys.load(settings.service.jwt))
            }
            try settings.validateForServing()
        } catch {
            FileHandle.standardError.write(Data("quire: \(error)\n".utf8))
            throw ExitCode(2)
        }
        LogSetup.bootstrap(level: settings.logLevel, format: settings.logFormat)
        let logger = Logger(label: "quire")
        routeLibmicrohttpdPanics(to: logger)
        for warning in settings.servingWarnings { logger.warning("\(warning)") }
        try Self.checkSources(settings)

        let connectionLimit = Self.raiseFileLimit(for: settings.service.http.connectionLimit, logger: logger)
        let storage = try ServeStorage(settings, logger: logger)
        // Access lines are written at `info`: below it the log is off, as a logger would filter them.
        var configuration = settings.service
        configuration.sources = settings.sources
        configuration.http.connectionLimit = connectionLimit
        configuration.accessLog = configuration.accessLog && settings.logLevel <= .info
        let accessLog =
            configuration.accessLog
            ? BufferedAccessLog(format: settings.logFormat, capacity: settings.accessLogBuffer) : nil
        let service = QuireService(
            configuration: configuration, logger: logger, store: storage.store, keys: keys, accessLog: accessLog)
        if settings.service.jwt.isEnabled {
            logger.info(
                "JSON Web Tokens on",
                metadata: ["hs256": "\(keys.acceptsHS256)", "jwks-kids": "\(keys.keyIDs.joined(separator: ","))"])
        }
        do {
            try service.start()
            storage.prepare(service.registry)
            try service.load()
            storage.follow(service.registry)
        } catch {
            logger.critical("cannot start: \(error)")
            service.shutdown()
            accessLog?.close()
            throw ExitCode(1)
        }
        var signal = TerminationSignals.wait()
        while signal == SIGHUP {
            Self.reloadCertificate(of: service.server, logger: logger)
            Self.reloadTokenKeys(of: service, settings: settings.service.jwt, logger: logger)
            signal = TerminationSignals.wait()
        }
        logger.info("received signal \(signal == SIGTERM ? "SIGTERM" : "SIGINT"): shutting down")
        service.shutdown()
        accessLog?.close()  // every buffered line written: requests have ended
        storage.close()
    }

    /// Every connection holds a descriptor: the open-file limit is raised to what `connectionLimit` needs, 256 more
    /// for the rest of the process (the hard limit too where the process may). Where it stays short, the log says
    /// what to set, and the connections served are capped to what the limit holds (returned): past that cap a
    /// connection is accepted and closed at once, where past the open-file limit it could not even be accepted and
    /// would wait in the kernel's queue.
    private static func raiseFileLimit(for connectionLimit: Int, logger: Logger) -> Int {
        let reserved = 256
        let outcome = FileDescriptorLimit.raise(toAtLeast: connectionLimit + reserved)
        guard let advice = outcome.advice else {
            if outcome.after != outcome.before {
                logger.info(
                    "open-file limit raised", metadata: ["from": "\(outcome.before)", "to": "\(outcome.after)"])
            }
            return connectionLimit
        }
        let held = max(1, min(connectionLimit, Int(clamping: outcome.after.soft) - reserved))
        logger.warning(
            "open-file limit below what server.connectionLimit needs: \(advice); until then at most \(held) connections",
            metadata: ["limit": "\(outcome.after)", "wanted": "\(outcome.wanted)", "connections": "\(held)"])
        return held
    }

    /// Every source checked against its database (API.md §2b): each refusal printed, naming the source and the key,
    /// then exit status 2.
    private static func checkSources(_ settings: Settings) throws {
        guard !settings.sources.isEmpty else { return }
        var refusals: [String] = []
        for source in settings.sources {
            refusals += SourceFollower.refusals(of: source, limits: settings.service.limits).map(\.description)
        }
        guard !refusals.isEmpty else { return }
        for refusal in refusals { FileHandle.standardError.write(Data("quire: \(refusal)\n".utf8)) }
        throw ExitCode(2)
    }

    /// SIGHUP: the certificate and key files are read again for every later handshake; a file that
    /// cannot be used is logged and the certificate in use stays.
    private static func reloadCertificate(of server: HTTPServer, logger: Logger) {
        guard server.configuration.tls != nil else {
            logger.info("received signal SIGHUP: nothing to reload (plain HTTP)")
            return
        }
        do {
            let certificate = try server.reloadCertificate()
            logger.info("received signal SIGHUP: TLS certificate reloaded", metadata: ["certificate": "\(certificate)"])
            for warning in certificate.warnings() { logger.warning("TLS: \(warning)") }
        } catch {
            let current = server.tlsCertificate.map { "\($0)" } ?? "none"
            logger.error(
                "received signal SIGHUP: cannot reload the TLS certificate, keeping the one in use: \(error)",
                metadata: ["certificate": "\(current)"])
        }
    }

    /// SIGHUP: the JWKS file is read again; tokens of keys no longer in it stop working, tokens of new
    /// keys work. A file that cannot be used is logged and the keys in use stay.
    private static func reloadTokenKeys(of service: QuireService, settings: TokenSettings, logger: Logger) {
        guard settings.jwksFile != nil else {
            logger.info("received signal SIGHUP: no JWKS file to reload")
            return
        }
        do {
            let keys = try runBlocking { try await TokenKeys.load(settings) }
            service.replaceTokenKeys(keys)
            logger.info(
                "received signal SIGHUP: JWKS reloaded",
                metadata: ["jwks-kids": "\(keys.keyIDs.joined(separator: ","))"])
        } catch {
            logger.error("received signal SIGHUP: cannot reload the JWKS file, keeping the keys in use: \(error)")
        }
    }
}
