import ArgumentParser
import Foundation
import QuireStore

/// `quire backup --storage PATH --to FILE`: a consistent copy of the lists while the server runs.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract:
            "Copy the lists' database consistently, even while `quire serve` writes to it (SQLite online backup).",
        discussion: "The copy is a new file (never an existing one); `quire serve --storage FILE` serves its lists."
    )

    @Option(
        name: .long,
        help: "The database to copy: the server's storage.path (default: $QUIRE_STORAGE_PATH, else data/quire.sqlite).")
    var storage: String = ProcessInfo.processInfo.environment["QUIRE_STORAGE_PATH"] ?? Settings.defaultStoragePath

    @Option(name: .long, help: "The new file to write.")
    var to: String

    func run() throws {
        do {
            try SQLiteListStore.backup(from: storage, to: to)
        } catch {
            FileHandle.standardError.write(Data("quire: \(error)\n".utf8))
            throw ExitCode(1)
        }
        print("backed up \(storage) to \(to)")
    }
}
