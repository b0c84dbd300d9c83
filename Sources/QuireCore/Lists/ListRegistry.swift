import Synchronization

/// The named lists and their current versions: readers take a version without waiting for writers;
/// writers of one list go one at a time, build the next version, have the store commit it, and only
/// then publish it and tell the observers.
public final class ListRegistry: Sendable {
    /// A list's name, current version and counts, for listings.
    public struct Summary: Sendable, Equatable {
        public let name: String
        public let version: UInt64
        public let sections: Int
        public let items: Int
    }

    /// What a successful write did.
    public struct Commit: Sendable {
        /// The version now current.
        public let version: ListVersion
        /// `true` when the write created the list.
        public let created: Bool
    }

    private let current = Mutex<[String: ListVersion]>([:])
    private let writers = Mutex<[String: WriteLock]>([:])
    private let observers = Mutex<[@Sendable (String, ListVersion?) -> Void]>([])
    private let store: any ListStore
    /// The limits every list is built with.
    public let limits: ListLimits

    public init(store: any ListStore, limits: ListLimits) {
        self.store = store
        self.limits = limits
    }

    /// Loads every stored list; replaces what the registry holds.
    ///
    /// - Returns: the number of lists loaded.
    @discardableResult
    public func load() throws -> Int {
        let lists = try store.loadAll(limits: limits)
        current.withLock { $0 = lists }
        return lists.count
    }

    /// Calls `observer` after every committed write or delete (`nil` version) of any list, on the
    /// writer's thread, outside every lock.
    public func observe(_ observer: @escaping @Sendable (String, ListVersion?) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// The current version of `name`, or `nil`.
    ///
    /// - Complexity: O(1), under a short lock.
    public func version(of name: String) -> ListVersion? {
        current.withLock { $0[name] }
    }

    /// Every list, sorted by name (byte order).
    ///
    /// - Complexity: O(*l* log *l*) for *l* lists.
    public func summaries() -> [Summary] {
        let lists = current.withLock { $0 }
        return lists.map {
            Summary(name: $0.key, version: $0.value.version, sections: $0.value.sectionCount, items: $0.value.itemCount)
        }
        .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The number of lists and of items in all of them.
    public var totals: (lists: Int, items: Int) {
        current.withLock { lists in (lists.count, lists.values.reduce(0) { $0 + $1.itemCount }) }
    }

    /// Builds and commits the next version of `name`.
    ///
    /// - Parameters:
    ///   - ifMatch: when given, the write happens only if the current version is one of these
    ///     (`412`; a list that does not exist has version 0 here).
    ///   - mustExist: refuse the write when the list does not exist (ops need one).
    ///   - build: makes the next version from the current one (`nil` when the list is new); throws to
    ///     refuse the write.
    /// - Throws: ``WriteError``; nothing changed then.
    public func write(
        _ name: String, ifMatch: Set<UInt64>? = nil, mustExist: Bool = false,
        build: (ListVersion?) throws(WriteError) -> ListVersion
    ) throws(WriteError) -> Commit {
        let commit = try lock(for: name).withLock { () throws(WriteError) -> Commit in
            let previous = version(of: name)
            if mustExist && previous == nil { throw .listNotFound }
            if let ifMatch, !ifMatch.contains(previous?.version ?? 0) {
                throw .versionMismatch(current: previous?.version ?? 0)
            }
            var next = try build(previous)
            do {
                try store.commit(list: name, previous: previous, next: next)
            } catch {
                throw .storage(String(describing: error))
            }
            // Ids that came and went: the same version on a table of the ids in use (the store keeps ids,
            // not keys, so it needs no new row).
            if next.wantsCompaction { next = next.compacted() }
            current.withLock { $0[name] = next }
            return Commit(version: next, created: previous == nil)
        }
        notify(name, commit.version)
        return commit
    }

    /// Deletes `name`.
    ///
    /// - Throws: ``WriteError/listNotFound``, ``WriteError/versionMismatch(current:)`` or a storage error.
    public func delete(_ name: String, ifMatch: Set<UInt64>? = nil) throws(WriteError) {
        try lock(for: name).withLock { () throws(WriteError) in
            guard let previous = version(of: name) else { throw .listNotFound }
            if let ifMatch, !ifMatch.contains(previous.version) {
                throw .versionMismatch(current: previous.version)
            }
            do {
                try store.delete(list: name)
            } catch {
                throw .storage(String(describing: error))
            }
            current.withLock { $0[name] = nil }
        }
        notify(name, nil)
    }

    private func notify(_ name: String, _ version: ListVersion?) {
        for observer in observers.withLock({ $0 }) {
            observer(name, version)
        }
    }

    /// The write lock of `name` (created on first use; kept, as a list name is small).
    private func lock(for name: String) -> WriteLock {
        writers.withLock { locks in
            if let lock = locks[name] { return lock }
            let lock = WriteLock()
            locks[name] = lock
            return lock
        }
    }
}

extension ListRegistry {
    /// Why a write was refused. Nothing changed.
    public enum WriteError: Error, Sendable {
        case listNotFound
        /// `If-Match` named another version; `current` is the list's (0 when it does not exist).
        case versionMismatch(current: UInt64)
        case invalidList(ListValidationError)
        case invalidOp(OpError)
        /// The store failed to commit; the previous version stays current.
        case storage(String)
    }
}

/// One list's writer lock.
private final class WriteLock: Sendable {
    private let mutex = Mutex(())

    func withLock<Result>(_ body: () throws(ListRegistry.WriteError) -> Result) throws(ListRegistry.WriteError)
        -> Result
    {
        try mutex.withLock { _ throws(ListRegistry.WriteError) in try body() }
    }
}
