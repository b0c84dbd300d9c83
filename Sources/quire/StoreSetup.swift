import ArgumentParser
import Logging
import QuireCore
import QuireStore

#if PostgreSQL
    import QuirePostgres
#endif

/// Opening the store for `quire serve` and `quire backup`.
enum StoreSetup {
    /// Opens the store at `path`, or stops the process: a file that cannot be opened (unreadable, not a
    /// database, damaged, from a newer quire) is reported with its path and cause, left as it is, and the
    /// process exits with status 1.
    static func open(_ path: String, journalWrites: Int, logger: Logger) throws -> SQLiteListStore {
        do {
            let store = try SQLiteListStore(path: path, journalLimit: journalWrites)
            logger.info("storage open", metadata: ["path": "\(path)"])
            return store
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
    }

    #if PostgreSQL
        /// Connects to the shared PostgreSQL store (creating its tables when missing), or stops the process
        /// with status 1 and the reason (the server's address, never its password).
        static func open(_ settings: PostgresSettings, logger: Logger) throws -> PostgresListStore {
            do {
                let store = try PostgresListStore(settings: settings, logger: logger)
                logger.info(
                    "storage open", metadata: ["postgres": "\(settings.redacted)", "pool": "\(settings.poolSize)"])
                return store
            } catch {
                logger.critical("cannot start: \(error)")
                throw ExitCode(1)
            }
        }
    #endif
}

/// The store `quire serve` keeps its lists in, as its settings name it: the SQLite file, none (`:memory:`, the lists
/// in the registry's memory only), or (in a build with the `PostgreSQL` trait, the default) the shared store of a
/// cluster, with the change feed that replays the other instances' writes. The one place `quire serve` tells them
/// apart.
final class ServeStorage {
    let store: any ListStore
    private let logger: Logger
    #if PostgreSQL
        private let shared: PostgresListStore?
        private var feed: PostgresChangeFeed?
    #endif

    /// Opens the store, or stops the process with status 1 and the reason (``StoreSetup``).
    init(_ settings: Settings, logger: Logger) throws {
        self.logger = logger
        #if PostgreSQL
            if let postgres = settings.postgres {
                let shared = try StoreSetup.open(postgres, logger: logger)
                self.shared = shared
                store = shared
                return
            }
            shared = nil
        #endif
        if settings.storagePath == SQLiteListStore.inMemoryPath {
            // Nothing to keep: the registry's memory holds every list, whose writes are then made at once on the
            // thread that received them (a SQLite database in memory would cost each write its rows, and a hand-off
            // to the writer of its one connection, for nothing kept).
            store = InMemoryListStore()
            logger.info("storage open", metadata: ["path": "\(settings.storagePath)"])
            return
        }
        store = try StoreSetup.open(settings.storagePath, journalWrites: settings.journalWrites, logger: logger)
    }

    /// Called before the service turns ready: a shared store is catching up (`/readyz` says so) until its feed
    /// is listening and has compared the lists held with the store.
    func prepare(_ registry: ListRegistry) {
        #if PostgreSQL
            guard shared != nil else { return }
            registry.replication.isCatchingUp = true
        #endif
    }

    /// Called once the service is ready: a shared store's feed brings the commits of other instances to the lists
    /// this one holds.
    func follow(_ registry: ListRegistry) {
        #if PostgreSQL
            guard let shared else { return }
            feed = PostgresChangeFeed(store: shared, registry: registry, logger: logger)
            feed?.start()
        #endif
    }

    /// After the service has shut down: the feed stops; the SQLite file is closed, which checkpoints its
    /// write-ahead log into the file (what a kill leaves, the next start reads); the shared store's connections
    /// close.
    func close() {
        #if PostgreSQL
            feed?.stop()
            shared?.close()
        #endif
        if let store = store as? SQLiteListStore {
            do { try store.close() } catch { logger.warning("closing the storage: \(error)") }
        }
    }
}
