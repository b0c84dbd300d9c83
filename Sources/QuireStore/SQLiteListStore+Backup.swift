import Foundation
import GRDB

extension SQLiteListStore {
    /// Copies the database at `source` into a new file at `destination`, consistently, while a server may
    /// be writing to it: SQLite's online backup reads one snapshot (a read transaction, which in WAL mode
    /// never blocks the writer) and copies every page of it. The copy is checked (`quick_check`) and made
    /// durable before this returns; it opens as a store with the same lists.
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
        let store = try SQLiteListStore(path: source)
        do {
            let folder = URL(fileURLWithPath: destination).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let copy = try DatabaseQueue(path: destination, configuration: configuration)
            try store.database.backup(to: copy)
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
}
