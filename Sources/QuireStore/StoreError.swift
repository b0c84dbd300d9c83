import GRDB

/// Why the store could not open, load or write, with a message an operator can act on.
///
/// The description is stable: it names what failed and the file, then SQLite's own words.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    private enum Kind: Sendable {
        case open
        case load
        case write
        case backup
    }

    private let kind: Kind
    /// The database file (or `:memory:`).
    public let path: String
    private let reason: String

    private init(_ kind: Kind, path: String, reason: String) {
        self.kind = kind
        self.path = path
        self.reason = reason
    }

    /// The file cannot be opened as a Quire database: unreadable, not a database, damaged, or from a
    /// newer Quire.
    static func open(_ path: String, _ error: any Error) -> StoreError {
        StoreError(.open, path: path, reason: describe(error))
    }

    static func open(_ path: String, reason: String) -> StoreError {
        StoreError(.open, path: path, reason: reason)
    }

    /// The stored lists cannot be read back.
    static func load(_ path: String, _ error: any Error) -> StoreError {
        StoreError(.load, path: path, reason: describe(error))
    }

    static func load(_ path: String, reason: String) -> StoreError {
        StoreError(.load, path: path, reason: reason)
    }

    /// A write could not be made durable; nothing of it is stored.
    static func write(_ path: String, _ error: any Error) -> StoreError {
        StoreError(.write, path: path, reason: describe(error))
    }

    static func write(_ path: String, reason: String) -> StoreError {
        StoreError(.write, path: path, reason: reason)
    }

    /// A backup could not be made.
    static func backup(_ path: String, _ reason: String) -> StoreError {
        StoreError(.backup, path: path, reason: reason)
    }

    /// Whether the failure may pass (a full disk, a busy or read-only file): a write may be retried.
    public var isTransient: Bool { kind == .write }

    public var description: String {
        switch kind {
        case .open: "cannot open the database \(path): \(reason)"
        case .load: "cannot load the lists stored in \(path): \(reason)"
        case .write: "cannot store the write in \(path): \(reason)"
        case .backup: "cannot back up \(path): \(reason)"
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return "\(error.message ?? "SQLite error") (SQLite result code \(error.extendedResultCode.rawValue))"
        }
        return String(describing: error)
    }
}
