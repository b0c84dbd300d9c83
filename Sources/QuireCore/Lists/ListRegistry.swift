import Synchronization

/// The named lists and their current versions: readers take a version without waiting for writers;
/// writers of one list go one at a time, build the next version, have the store commit it, and only
/// then publish it and tell the observers.
public final class ListRegistry: Sendable {
    /// What a successful write did.
    public struct Commit: Sendable {
        /// The version now current.
        public let version: ListVersion
        /// `true` when the write created the list.
        public let created: Bool
    }

    private let current = Mutex(CurrentVersions())
    private let writers = Mutex<[String: WriteLock]>([:])
    private let observers = Mutex<[@Sendable (String, ListVersion?) -> Void]>([])
    private let store: any ListStore
    /// The limits every list is built with.
    public let limits: ListLimits
    /// What replication did (a shared store): conflicts retried, lists reloaded; the change feed adds its own.
    public let replication = ReplicationStatus()

    public init(store: any ListStore, limits: ListLimits) {
        self.store = store
        self.limits = limits
    }

    /// Loads every stored list; replaces what the registry holds.
    ///
    /// - Returns: the number of lists loaded.
    @discardableResult
    public func load() throws -> Int {
        let stored = try store.loadShared(limits: limits)
        current.withLock { $0.replace(with: stored.lists) }
        for (name, position) in stored.positions {
            lock(for: name).withLock { $0 = position }
        }
        loadedPosition.store(stored.logPosition, ordering: .releasing)
        return stored.lists.count
    }

    /// The position in a shared store's log that the last ``load()`` was complete up to: where the change
    /// feed starts reading.
    public var loadedLogPosition: Int64 { loadedPosition.load(ordering: .acquiring) }
    private let loadedPosition = Atomic<Int64>(0)

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

    /// Whether a list named `name` exists (its version is not copied out: a dictionary's getter would retain and
    /// release each of its tables).
    public func contains(_ name: String) -> Bool {
        current.withLock { $0.handles[name] != nil }
    }

    /// A list as a cache of what is made from its versions holds it: whether the version something was made
    /// from is still the list's current one is one atomic load, with no lookup of the list by its name.
    ///
    /// A list's handle lasts as long as the list: the list deleted, its handle is retired (never current again),
    /// and a list created again under the name has a new one.
    public final class ListHandle: Sendable {
        private let generation = Atomic<UInt64>(0)

        /// The generation of the list's current version: numbered process-wide, so that no two versions of any
        /// lists share one; 0 once the list is gone.
        public var currentGeneration: UInt64 { generation.load(ordering: .acquiring) }

        /// The list has a new current version: its generation, the next process-wide.
        fileprivate func advance() {
            generation.store(Self.generations.add(1, ordering: .relaxed).newValue, ordering: .releasing)
        }

        fileprivate func retire() {
            generation.store(0, ordering: .releasing)
        }

        private static let generations = Atomic<UInt64>(0)
    }

    /// The current version of `name` with its handle and the version's generation (see ``ListHandle``), read
    /// together, or `nil`.
    public func handledVersion(of name: String) -> (version: ListVersion, handle: ListHandle, generation: UInt64)? {
        current.withLock { current in
            guard let version = current[name], let handle = current.handles[name] else { return nil }
            return (version, handle, handle.currentGeneration)
        }
    }

    /// Up to `limit` of the lists `selection` covers whose names come after `after` (from the first when `nil`),
    /// in name order (byte order of their UTF-8), with their versions and sizes: read from the store, which holds
    /// every list whether this registry has loaded it or not (and, shared, those other instances wrote), or
    /// from this registry's memory when the store keeps no lists (``InMemoryListStore``).
    ///
    /// - Throws: the store's error when it cannot be read.
    /// - Complexity: the store's (``ListStore/summaries(of:after:limit:)``); from memory, O(*l* · *r* + *m* log
    ///   *m*) for *l* lists, *r* ranges in `selection` and *m* lists of it after `after`.
    public func summaries(of selection: ListSelection, after: String? = nil, limit: Int) throws -> [ListSummary] {
        guard limit > 0, !selection.isEmpty else { return [] }
        if let stored = try store.summaries(of: selection, after: after, limit: limit) { return stored }
        let lists = current.withLock { $0.versions }
        let ranges = selection.ranges(after: after)
        var summaries: [ListSummary] = []
        for (name, version) in lists where ranges.contains(where: { $0.contains(name) }) {
            summaries.append(ListSummary(name: name, version))
        }
        summaries.sort { ListNameRange.precedes($0.name, $1.name) }
        return Array(summaries.prefix(limit))
    }

    /// The number of lists and of items in all of them.
    public var totals: (lists: Int, items: Int) {
        current.withLock { lists in (lists.versions.count, lists.versions.values.reduce(0) { $0 + $1.itemCount }) }
    }

    /// Builds and commits the next version of `name` from a write that every instance can replay: what
    /// the routes use, and what a shared store needs.
    ///
    /// On a shared store, when another instance committed the list first, the registry replays that
    /// instance's changes and makes the write again on top of them (up to ``maximumAttempts`` times),
    /// so that the producer sees one serial history: its `If-Match` and its ops are checked against the
    /// version the write finally commits on.
    ///
    /// - Parameters:
    ///   - ifMatch: when given, the write happens only if the list exists and its current version matches it
    ///     (`*`: any version), checked under the list's lock (else `412`, naming version 0 for a list that
    ///     does not exist).
    ///   - mustExist: refuse the write when the list does not exist (ops need one).
    ///   - change: the write to make on the current version (`nil` when the list is new); `nil` to write
    ///     nothing (the current version is answered); throws to refuse the write.
    /// - Throws: ``WriteError``; nothing changed then.
    public func write(
        _ name: String, ifMatch: IfMatch? = nil, mustExist: Bool = false,
        change: (ListVersion?) throws(WriteError) -> ListWrite?
    ) throws(WriteError) -> Commit {
        try commit(name, ifMatch: ifMatch, mustExist: mustExist) { previous throws(WriteError) in
            guard let write = try change(previous) else { return nil }
            return (write, try write.apply(to: previous, limits: limits))
        }
    }

    /// Builds and commits the next version of `name` with `build`: for tests and stores of one instance
    /// (a shared store refuses a write it cannot log; the routes use ``write(_:ifMatch:mustExist:change:)``).
    ///
    /// - Parameter build: makes the next version from the current one (`nil` when the list is new);
    ///   throws to refuse the write.
    /// - Throws: ``WriteError``; nothing changed then.
    public func write(
        _ name: String, ifMatch: IfMatch? = nil, mustExist: Bool = false,
        build: (ListVersion?) throws(WriteError) -> ListVersion
    ) throws(WriteError) -> Commit {
        try commit(name, ifMatch: ifMatch, mustExist: mustExist) { previous throws(WriteError) in
            (nil, try build(previous))
        }
    }

    /// A write's `If-Match`, checked against the version current under the list's lock (never one read
    /// before it, which another write may have replaced meanwhile).
    public enum IfMatch: Sendable, Equatable, ExpressibleByArrayLiteral {
        /// `*`: any version, as long as the list exists.
        case any
        /// One of these versions.
        case versions(Set<UInt64>)

        public init(arrayLiteral versions: UInt64...) {
            self = .versions(Set(versions))
        }

        func matches(_ version: UInt64) -> Bool {
            switch self {
            case .any: true
            case .versions(let versions): versions.contains(version)
            }
        }
    }

    /// How many times a write is made again after losing the race to another instance's commit.
    public static let maximumAttempts = 16

    private func commit(
        _ name: String, ifMatch: IfMatch?, mustExist: Bool,
        make: (ListVersion?) throws(WriteError) -> (ListWrite?, ListVersion)?
    ) throws(WriteError) -> Commit {
        var events = Events()
        // Versions replayed while catching up are announced whatever the outcome of the write.
        defer { notify(events) }
        return try lock(for: name).withLock { position throws(WriteError) -> Commit in
            var attempt = 0
            var conflicted = false
            defer { if conflicted { store.endWrite(list: name) } }
            var verified = false
            while true {
                attempt += 1
                let previous = version(of: name)
                let made: (ListWrite?, ListVersion)?
                do throws(WriteError) {
                    if mustExist && previous == nil { throw .listNotFound }
                    // A list that does not exist matches no tag: If-Match cannot create a list.
                    if let ifMatch, previous.map({ ifMatch.matches($0.version) }) != true {
                        throw .versionMismatch(current: previous?.version ?? 0)
                    }
                    made = try make(previous)
                } catch {
                    if try recheck(name, verified: &verified, position: &position, events: &events) { continue }
                    throw error
                }
                guard let (write, built) = made else {
                    guard let previous else { throw .listNotFound }
                    return Commit(version: previous, created: false)
                }
                var next = built
                if previous == nil {
                    // A name deleted before: its versions go on from the deleted list's, never from 1 anew.
                    let retired: UInt64
                    do { retired = try store.retiredVersion(of: name) } catch { throw WriteError(storeFailure: error) }
                    if next.version <= retired { next = next.renumbered(as: retired + 1) }
                }
                do {
                    if let logged = try store.commit(
                        list: name, previous: previous, at: position, next: next, write: write)
                    {
                        position = logged
                    }
                } catch let conflict as StoreConflict {
                    conflicted = true
                    try recover(from: conflict, attempt: attempt, position: &position, events: &events)
                    continue
                } catch {
                    throw WriteError(storeFailure: error)
                }
                // Ids that came and went: the same version on a table of the ids in use (the store keeps ids,
                // not keys, so it needs no new row).
                if next.wantsCompaction { next = next.compacted() }
                current.withLock { $0[name] = next }
                events.append(name, next)
                return Commit(version: next, created: previous == nil)
            }
        }
    }

    /// Deletes `name`.
    ///
    /// - Throws: ``WriteError/listNotFound``, ``WriteError/versionMismatch(current:)`` or a storage error.
    public func delete(_ name: String, ifMatch: IfMatch? = nil) throws(WriteError) {
        var events = Events()
        defer { notify(events) }
        try lock(for: name).withLock { position throws(WriteError) in
            var attempt = 0
            var conflicted = false
            defer { if conflicted { store.endWrite(list: name) } }
            var verified = false
            while true {
                attempt += 1
                let previous: ListVersion
                do throws(WriteError) {
                    guard let held = version(of: name) else { throw .listNotFound }
                    if let ifMatch, !ifMatch.matches(held.version) { throw .versionMismatch(current: held.version) }
                    previous = held
                } catch {
                    if try recheck(name, verified: &verified, position: &position, events: &events) { continue }
                    throw error
                }
                do {
                    if let logged = try store.delete(list: name, previous: previous, at: position) {
                        position = logged
                    }
                } catch let conflict as StoreConflict {
                    conflicted = true
                    try recover(from: conflict, attempt: attempt, position: &position, events: &events)
                    continue
                } catch {
                    throw WriteError(storeFailure: error)
                }
                current.withLock { $0[name] = nil }
                events.append(name, nil)
                return
            }
        }
    }

    /// Applies changes other instances committed to a shared store (its change feed), in log order: each
    /// write is replayed on the version it was made on, so the list is not reloaded. A change this
    /// registry already holds (its own commit, or one replayed when a write lost a race) is skipped. A
    /// change that does not follow the version held (a change missed) reloads that list from the store.
    ///
    /// Observers are told of every version published, as for local writes.
    ///
    /// - Throws: when a list had to be reloaded and the store could not be read; the changes before it
    ///   are applied, and the caller reads the log again from where it stood.
    public func apply(_ changes: [LoggedChange]) throws {
        var events = Events()
        defer { notify(events) }
        var index = changes.startIndex
        while index < changes.endIndex {
            let name = changes[index].list
            var end = index + 1
            while end < changes.endIndex && changes[end].list == name { end += 1 }
            let run = changes[index..<end]
            try lock(for: name).withLock { position throws in
                for change in run where change.position > position {
                    try replay(change, position: &position, events: &events)
                }
            }
            index = end
        }
    }

    /// Replaces every list by the store's (an instance too far behind for the log): lists the registry
    /// holds at a later log position than the snapshot (written while it was read) are kept.
    public func reload(from stored: StoredLists) {
        var events = Events()
        let names = Set(current.withLock { Array($0.versions.keys) }).union(stored.lists.keys)
        for name in names {
            lock(for: name).withLock { position in
                let snapshotPosition = stored.positions[name] ?? stored.logPosition
                guard snapshotPosition > position else { return }
                let version = stored.lists[name]
                current.withLock { $0[name] = version }
                position = snapshotPosition
                events.append(name, version)
            }
        }
        replication.reloaded()
        notify(events)
    }

    /// Under the list's lock, after its commit lost the race to another instance's: counts it, gives up past
    /// ``maximumAttempts``, else replays the winner's changes so that the write is made again on top of them.
    private func recover(
        from conflict: StoreConflict, attempt: Int, position: inout Int64, events: inout Events
    ) throws(WriteError) {
        replication.conflictRetried()
        guard attempt < Self.maximumAttempts else { throw .storage("\(conflict), \(attempt) times in a row") }
        do {
            try catchUp(conflict.list, position: &position, events: &events)
        } catch {
            throw WriteError(storeFailure: error)
        }
    }

    /// Under `name`'s lock, before a write is refused on the version held here: whether another instance
    /// had changed the list meanwhile (a shared store; the changes are applied), so that the write is
    /// checked again on the list as the store holds it, once per write (`verified`). A producer whose requests
    /// are spread over instances is never refused because one of them had not yet heard of its previous write.
    private func recheck(_ name: String, verified: inout Bool, position: inout Int64, events: inout Events)
        throws(WriteError) -> Bool
    {
        guard !verified else { return false }
        verified = true
        let before = position
        do {
            try catchUp(name, position: &position, events: &events)
        } catch {
            throw WriteError(storeFailure: error)
        }
        return position != before
    }

    /// Under `name`'s lock: the changes other instances made to it since `position`, from the store.
    private func catchUp(_ name: String, position: inout Int64, events: inout Events) throws {
        for change in try store.changes(of: name, after: position) where change.position > position {
            try replay(change, position: &position, events: &events)
        }
    }

    /// Under the list's lock: one logged change made here.
    private func replay(_ change: LoggedChange, position: inout Int64, events: inout Events) throws {
        let name = change.list
        let held = version(of: name)
        guard let write = change.write else {
            current.withLock { $0[name] = nil }
            position = change.position
            events.append(name, nil)
            return
        }
        // A creation replays whatever its number: a name created again goes on from its deleted list's versions.
        let follows =
            held.map { $0.version + 1 == change.version } ?? { if case .replace = write { true } else { false } }()
        if follows, let built = try? write.apply(to: held, limits: limits),
            case var next = held == nil ? built.renumbered(as: change.version) : built, next.version == change.version
        {
            if next.wantsCompaction { next = next.compacted() }
            current.withLock { $0[name] = next }
            position = change.position
            events.append(name, next)
            return
        }
        // A change missed, or one that does not replay here: the list as the store holds it now.
        let (stored, storedPosition) = try store.load(list: name, limits: limits)
        current.withLock { $0[name] = stored }
        position = storedPosition
        events.append(name, stored)
        replication.listReloaded()
    }

    /// Versions to tell the observers of, once every lock is released.
    private struct Events {
        var published: [(String, ListVersion?)] = []

        mutating func append(_ name: String, _ version: ListVersion?) {
            published.append((name, version))
        }
    }

    private func notify(_ events: Events) {
        guard !events.published.isEmpty else { return }
        let observers = observers.withLock { $0 }
        for (name, version) in events.published {
            for observer in observers {
                observer(name, version)
            }
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
        /// The store's commit was sent but not answered: the write may or may not have been made. The previous
        /// version stays current here until a shared store's change feed says otherwise.
        case storageOutcomeUnknown(String)

        /// A store's failure to commit, as a write error: of unknown outcome when the store says so.
        init(storeFailure error: any Error) {
            if let unknown = error as? StoreOutcomeUnknown {
                self = .storageOutcomeUnknown(unknown.description)
            } else {
                self = .storage(String(describing: error))
            }
        }
    }
}

/// One list's writer lock, and the position in a shared store's log of the last change the registry
/// holds of that list (0 without a log): kept after a delete, so that a replayed change is never applied
/// twice.
private final class WriteLock: Sendable {
    private let mutex = Mutex<Int64>(0)

    func withLock<Result>(_ body: (inout Int64) throws(ListRegistry.WriteError) -> Result)
        throws(ListRegistry.WriteError) -> Result
    {
        try mutex.withLock { position throws(ListRegistry.WriteError) in try body(&position) }
    }

    func withLock<Result>(_ body: (inout Int64) throws -> Result) throws -> Result {
        try mutex.withLock { position in try body(&position) }
    }

    func withLock<Result>(_ body: (inout Int64) -> Result) -> Result {
        mutex.withLock { position in body(&position) }
    }
}

/// The current version of each list, and each list's handle (advanced with every version it is given).
private struct CurrentVersions {
    private(set) var versions: [String: ListVersion] = [:]
    private(set) var handles: [String: ListRegistry.ListHandle] = [:]

    /// Holds `lists` and no other: each one set (or removed) as a write does, so that every handle of a list
    /// this replaces or removes moves on.
    mutating func replace(with lists: [String: ListVersion]) {
        for name in versions.keys where lists[name] == nil { self[name] = nil }
        for (name, version) in lists { self[name] = version }
    }

    subscript(name: String) -> ListVersion? {
        get { versions[name] }
        set {
            guard let newValue else {
                versions[name] = nil
                handles.removeValue(forKey: name)?.retire()
                return
            }
            versions[name] = newValue
            if let handle = handles[name] {
                handle.advance()
            } else {
                let handle = ListRegistry.ListHandle()
                handle.advance()
                handles[name] = handle
            }
        }
    }
}
