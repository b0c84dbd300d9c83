import ArgumentParser
import Foundation

/// `quire config`: the configuration `quire serve` would run with, as YAML (`--defaults`: the embedded defaults
/// alone), as `nginx -T` or `postgres -C` show theirs.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the effective configuration as YAML, secrets as <redacted>.",
        discussion: """
            The settings are read as `quire serve` reads them (embedded defaults < --config file < QUIRE_* \
            environment < flags) and checked as it checks them; every key is printed, in the order and nesting of \
            config/quire.yaml, then the sources. --defaults prints the embedded defaults alone, ignoring the environment.
            """
    )

    @Flag(name: .long, help: "Print the embedded defaults alone (no file, environment or flags).")
    var defaults = false

    @OptionGroup var options: SettingsOptions

    func validate() throws {
        if defaults && (options.config != nil || !options.flagValues.isEmpty) {
            throw ValidationError("--defaults prints the embedded defaults alone: give it no --config and no flags")
        }
    }

    func run() throws {
        let (defaults, config, flags) = (self.defaults, options.config, options.flagValues)
        do {
            let text = try runBlocking {
                if defaults {
                    let input = try await Settings.input(configFile: nil, environment: [:], flags: [:])
                    return try Settings.yaml(input, header: "The embedded defaults of quire serve.")
                }
                let input = try await Settings.input(
                    configFile: config, environment: ProcessInfo.processInfo.environment, flags: flags)
                let sources = ["embedded defaults", config, "QUIRE_* environment", "flags"].compactMap { $0 }
                return try Settings.yaml(
                    input, header: "The configuration of quire serve: \(sources.joined(separator: " < ")).")
            }
            print(text, terminator: "")
        } catch {
            FileHandle.standardError.write(Data("quire config: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}
