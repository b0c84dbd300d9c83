import ArgumentParser
import Foundation
import Logging
import QuireCore
import QuireSources
import QuireStore

#if PostgreSQL
    import QuirePostgres
#endif

/// `quire sources status|resync|drop`: a source's state in the store and on its database, a copy of its table made
/// again at the next start, or the source removed from its database (API.md §2b).
struct SourcesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources",
        abstract: "The sources of the configuration: their state, a new copy of a table, a source dropped.",
        subcommands: [Status.self, Resync.self, Drop.self])

    /// The settings, the store and the named source (or all).
    struct Context {
        let settings: Settings
        let sources: [SourceConfiguration]

        init(options: SettingsOptions, name: String?) throws {
            let (config, flags) = (options.config, options.flagValues)
            settings = try runBlocking {
                try await Settings.load(
                    configFile: config, environment: ProcessInfo.processInfo.environment, flags: flags)
            }
            let sources = settings.sources.filter { name == nil || $0.name == name }
            guard !sources.isEmpty else {
                throw ValidationError(
                    name.map { "no source named \($0) in the configuration" } ?? "the configuration has no sources")
            }
            self.sources = sources
        }

        /// Runs `body` with the store the settings name (the SQLite file, or a cluster's PostgreSQL), then closes it.
        func withStore<Result>(_ body: (any ListStore) throws -> Result) throws -> Result {
            #if PostgreSQL
                if let postgres = settings.postgres {
                    let store = try PostgresListStore(settings: postgres, logger: Logger(label: "quire.sources"))
                    defer { store.close() }
                    return try body(store)
                }
            #endif
            let store = try SQLiteListStore(path: settings.storagePath)
            defer { try? store.close() }
            return try body(store)
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Each source's applied position and rows (the store), its slot and retained log (the database).")

        @OptionGroup var options: SettingsOptions
        @Argument(help: "A source's name (default: every source).") var name: String?

        func run() throws {
            let context = try Context(options: options, name: name)
            let states = try context.withStore { store in
                try context.sources.map { try store.sourceState(of: $0.name) }
            }
            for (source, state) in zip(context.sources, states) {
                var line = "\(source.name): \(source.table) → \(source.list)"
                line += state.position.map { ", applied through \(LSN($0))" } ?? ", no copy of the table yet"
                line += ", \(state.rows.count) rows"
                do {
                    let slot = try SourceAdministration.status(of: source)
                    if slot.exists {
                        line += "; slot \(source.slot) \(slot.active ? "streaming" : "idle")"
                        line += ", confirmed \(slot.confirmed.map { "\($0)" } ?? "-"), database at \(slot.current)"
                        line += ", retaining \(slot.retainedBytes ?? 0) bytes of log"
                    } else {
                        line += "; no slot \(source.slot) (the next start copies the table)"
                    }
                } catch {
                    line += "; database: \(error)"
                }
                print(line)
            }
        }
    }

    struct Resync: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy the source's table again at the next start (quire serve stopped): its slot is dropped.")

        @OptionGroup var options: SettingsOptions
        @Argument(help: "The source's name.") var name: String

        func run() throws {
            let context = try Context(options: options, name: name)
            // Without its slot, the follower's next start copies the table at a new slot's snapshot (and empties the
            // lists the copy leaves without rows, from the places the store still holds).
            try SourcesCommand.dropSlot(of: context.sources[0])
            print("\(name): its table is copied again when quire serve next starts; sessions on its lists resync")
        }
    }

    struct Drop: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Remove the source from its database (slot and publication: no log kept for it) and from the store.")

        @OptionGroup var options: SettingsOptions
        @Argument(help: "The source's name.") var name: String

        func run() throws {
            let context = try Context(options: options, name: name)
            let source = context.sources[0]
            try SourcesCommand.dropSlot(of: source)
            do {
                try SourceAdministration.dropPublication(of: source)
            } catch {
                FileHandle.standardError.write(Data("quire: dropping \(source.publication): \(error)\n".utf8))
                throw ExitCode(1)
            }
            try context.withStore { try $0.forgetSource(name) }
            print("\(name): slot \(source.slot) and publication \(source.publication) dropped; its lists stay")
        }
    }

    static func dropSlot(of source: SourceConfiguration) throws {
        do {
            try SourceAdministration.dropSlot(of: source)
        } catch {
            let hint = error.sqlState == "55006" ? " (stop quire serve first: its follower streams from it)" : ""
            FileHandle.standardError.write(Data("quire: dropping slot \(source.slot): \(error)\(hint)\n".utf8))
            throw ExitCode(1)
        }
    }
}
