import ArgumentParser
import Logging
import QuirePostgres
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

    /// Connects to the shared PostgreSQL store (creating its tables when missing), or stops the process
    /// with status 1 and the reason (the server's address, never its password).
    static func open(_ settings: PostgresSettings, logger: Logger) throws -> PostgresListStore {
        do {
            let store = try PostgresListStore(settings: settings, logger: logger)
            logger.info("storage open", metadata: ["postgres": "\(settings.redacted)", "pool": "\(settings.poolSize)"])
            return store
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
    }
}
