import ArgumentParser
import QuireVersion

struct QuireCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quire",
        abstract: "Serves sectioned lists to thin mobile clients: pages, per-client snapshots and diffs.",
        version: Release.version,
        subcommands: [
            ServeCommand.self, ConfigCommand.self, HealthCommand.self, BackupCommand.self, TokenCommand.self,
            SourcesCommand.self,
        ],
        defaultSubcommand: ServeCommand.self
    )
}
