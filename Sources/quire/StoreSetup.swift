import ArgumentParser
import Logging
import QuireStore

/// Opening the store for `quire serve` and `quire backup`.
enum StoreSetup {
    /// Opens the store at `path`, or stops the process: a file that cannot be opened (unreadable, not a
    /// database, damaged, from a newer quire) is reported with its path and cause, left as it is, and the
    /// process exits with status 1.
    static func open(_ path: String, logger: Logger) throws -> SQLiteListStore {
        do {
            let store = try SQLiteListStore(path: path)
            logger.info("storage open", metadata: ["path": "\(path)"])
            return store
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
    }
}
