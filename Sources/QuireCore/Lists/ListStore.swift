/// Where committed list versions are kept durably. The registry calls it under the list's write lock,
/// before it publishes a version: a version is visible to readers only once the store has it.
///
/// QuireStore implements it on SQLite; ``InMemoryListStore`` keeps nothing (the registry's memory is
/// the only copy), for tests and a service without storage. A shared database would be another
/// implementation of this protocol, not a change to the rest.
public protocol ListStore: Sendable {
    /// Every stored list at its latest version, built with `limits`.
    func loadAll(limits: ListLimits) throws -> [String: ListVersion]

    /// Makes `next` the stored version of `list`. `previous` is the version it replaces (`nil` when the
    /// list is created), so that a store can write only what changed.
    ///
    /// - Throws: when the version could not be stored durably; the registry then keeps `previous`.
    func commit(list: String, previous: ListVersion?, next: ListVersion) throws

    /// Removes `list` and everything stored for it.
    func delete(list: String) throws
}

/// A store that keeps nothing: lists live only in the registry's memory.
public struct InMemoryListStore: ListStore {
    public init() {}

    public func loadAll(limits: ListLimits) throws -> [String: ListVersion] { [:] }

    public func commit(list: String, previous: ListVersion?, next: ListVersion) throws {}

    public func delete(list: String) throws {}
}
