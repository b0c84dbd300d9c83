import Foundation
import GRDB

extension SQLiteListStore {
    /// Copies the database at `source` into a new file at `destination`, consistently, while a server may
    /// be writing to it: SQLite's online backup reads one snapshot (a read transaction, which in WAL mode
    /// never blocks the writer) and copies every page of it. The copy is checked (`quick_check`) and made
    /// durable before this returns; it opens as a store with the same lists.
    ///
    /// `source` is opened read-only, never as a store: a store upgrades the schema of a file written by an earlier
    /// release when it opens it, and a backup taken with a newer release, before an upgrade, would otherwise rewrite
    /// the file under the server still serving it (and copy the upgraded file, not the one to fall back to). The
    /// copy holds the schema `source` has; `quire serve` upgrades it when it opens it.
    ///
    /// - Throws: ``StoreError`` when `source` is missing or not a Quire database, when `destination` exists
    ///   (it is never overwritten), or when the copy fails (the partial copy is removed).
    public static func backup(from source: String, to destination: String) throws(StoreError) {
        guard FileManager.default.fileExists(atPath: source) else {
            throw StoreError.backup(source, "no such file")
        }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw StoreError.backup(source, "\(destination) exists; choose a new file")
        }
        let file = try openReadOnly(source)
        do {
            let folder = URL(fileURLWithPath: destination).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let copy = try DatabaseQueue(path: destination, configuration: configuration)
            try file.backup(to: copy)
            let check = try copy.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") }
            guard check == "ok" else { throw StoreError.backup(source, "the copy fails its check: \(check ?? "?")") }
            _ = try copy.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
            try copy.close()
        } catch {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: destination + suffix) }
            if let error = error as? StoreError { throw error }
            throw StoreError.backup(source, String(describing: error))
        }
    }

    /// `path` opened read-only, once it is known to be a Quire database (its first migration recorded), of any
    /// release.
    private static func openReadOnly(_ path: String) throws(StoreError) -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        configuration.label = "quire.backup-source"
        do {
            let file = try DatabaseQueue(path: path, configuration: configuration)
            let isQuire = try file.read { db in try migrator.appliedIdentifiers(db).contains(firstMigration) }
            guard isQuire else { throw StoreError.open(path, reason: "not a Quire database (no schema of quire's)") }
            return file
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.open(path, error)
        }
    }
}
