import Synchronization

/// The named lists and their current versions: readers take a version without waiting for writers;
/// writers of one list go one at a time, build the next version, have the store commit it, and only
/// then publish it and tell the observers.
///
/// Only the lists in use are held (resident): a list is loaded from the store by the first request that
/// needs it (``loadedVersion(of:)``, or a write), concurrent requests for it waiting on that one load (the
/// list's write lock); a name the store does not hold costs one lookup and leaves nothing behind. Past
/// ``memoryBudget`` bytes (counted by ``ListFootprint``), lists leave memory, the least recently used first
/// (the CLOCK approximation: a list used since the hand last passed gets a second chance), unless sessions hold
/// them (``pins``): those stay whatever the budget, and ``isOverBudget`` says when they alone exceed it. A list
/// that nothing requested (no read, no write here) and no session held for ``idleTimeout`` leaves memory too
/// (``releaseIdle(now:)``): in a cluster partitioned by list, the instance a list moved away from lets it go.
public final class ListRegistry: Sendable {
    /// The limits every list is built with.
    public let limits: ListLimits
    /// What replication did (a shared store): conflicts retried, lists reloaded; the change feed adds its own.
    public let replication = ReplicationStatus()
    /// The lists that sessions hold (and so their long polls and streams): they never leave memory.
    public let pins = ListPins()
    /// The bytes of lists held in memory past which unpinned lists leave it; 0: no bound. Not applied when the
    /// store keeps no lists (``InMemoryListStore``): the registry's memory is their only copy then.
    public let memoryBudget: Int
    /// How long a list may go without a request (a read or a write here) while no session holds it before it
    /// leaves memory (``releaseIdle(now:)``); `nil`: never. Not applied when the store keeps no lists.
    public let idleTimeout: Duration?

    // The state below is internal rather than private so that the registry's other files (its commits, its
    // following of other instances, its residency) reach it; nothing else in the module uses it.

    /// The lists held in memory, with their footprints and the eviction's ring.
    let residents = Mutex(Residents())
    /// The lock of every list held in memory or being worked on (``withListLock(_:_:)``).
    let writers = Mutex<[String: WriteLock]>([:])
    let observers = Mutex<[@Sendable (String, ListVersion?) -> Void]>([])
    private let loadObservers = Mutex<[@Sendable (Duration) -> Void]>([])
    /// Where the lists are kept (read by the service's metrics for the store's ``ListStore/backlog``).
    public let store: any ListStore
    /// Whether a caller of ``enforceBudget()`` is evicting: one at a time.
    let evicting = Atomic<Bool>(false)
    /// The residents' `bytes`, stored under their lock by every change: read without it by ``enforceBudget()``,
    /// which every write calls.
    let heldBytes = Atomic<Int>(0)
    let overBudget = Atomic<Bool>(false)
    let loads = Atomic<Int>(0)
    let evictions = Atomic<Int>(0)
    let idleReleases = Atomic<Int>(0)

    /// - Parameters:
    ///   - memoryBudget: see ``memoryBudget``.
    ///   - idleTimeout: see ``idleTimeout``; `nil` or not positive: never.
    public init(store: any ListStore, limits: ListLimits, memoryBudget: Int = 0, idleTimeout: Duration? = nil) {
        self.store = store
        self.limits = limits
        self.memoryBudget = store.keepsLists ? max(0, memoryBudget) : 0
        self.idleTimeout = store.keepsLists ? idleTimeout.flatMap { $0 > .zero ? $0 : nil } : nil
    }

    // MARK: - Counts and observers

    /// Lists loaded from the store since start (on demand, and reloaded by replication).
    public var loadCount: Int { loads.load(ordering: .relaxed) }
    /// Lists that left memory for the budget since start.
    public var evictionCount: Int { evictions.load(ordering: .relaxed) }
    /// Lists that left memory since start because nothing used them for ``idleTimeout``.
    public var idleReleaseCount: Int { idleReleases.load(ordering: .relaxed) }
    /// Whether the lists held are over the budget with none left that may leave (sessions hold the rest): new
    /// sessions on lists not held are refused meanwhile (see `docs/operations.md`).
    public var isOverBudget: Bool { overBudget.load(ordering: .relaxed) }

    /// The lists held in memory, their items and their estimated bytes (what ``memoryBudget`` bounds).
    public var resident: (lists: Int, items: Int, bytes: Int) {
        residents.withLock { ($0.entries.count, $0.items, $0.bytes) }
    }

    /// Calls `observer` with the time each load of a list from the store took.
    public func observeLoads(_ observer: @escaping @Sendable (Duration) -> Void) {
        loadObservers.withLock { $0.append(observer) }
    }

    /// Calls `observer` after every committed write or delete (`nil` version) of any list, on the
    /// writer's thread, outside every lock.
    public func observe(_ observer: @escaping @Sendable (String, ListVersion?) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    // MARK: - Reading

    /// The current version of `name` if it is held in memory, or `nil` (a list that does not exist, or one not
    /// loaded: ``loadedVersion(of:)`` loads it). Not a request of the list: what replication and observers read
    /// does not keep it from going idle (``handledVersion(of:)`` and ``loadedVersion(of:)`` are requests).
    ///
    /// - Complexity: O(1), under a short lock.
    public func version(of name: String) -> ListVersion? {
        residents.withLock { $0.used(name)?.version }
    }

    /// Whether a list named `name` is held in memory (its version is not copied out: a dictionary's getter would
    /// retain and release each of its tables).
    public func contains(_ name: String) -> Bool {
        residents.withLock { $0.entries.index(forKey: name) != nil }
    }

    /// Whether the store keeps the lists: when it does not (``InMemoryListStore``), a list not held does not exist.
    public var storeKeepsLists: Bool { store.keepsLists }

    /// Whether the store answers every call at once (``ListStore/answersAtOnce``): a write then waits on nothing
    /// but another write of its list, which holds that list's lock for microseconds.
    public var storeAnswersAtOnce: Bool { store.answersAtOnce }

    /// Whether the store waits on nothing but this machine's disk (``ListStore/syncsLocally``).
    public var storeSyncsLocally: Bool { store.syncsLocally }

    /// The lists with a write lock now: those held, and those being loaded or written (for tests).
    var lockCount: Int { writers.withLock { $0.count } }

    /// The current version of `name` with its handle and the version's generation (see ``ListHandle``), read
    /// together, if it is held in memory; else `nil`.
    public func handledVersion(of name: String) -> (version: ListVersion, handle: ListHandle, generation: UInt64)? {
        residents.withLock { residents in
            guard let entry = residents.used(name, requested: true) else { return nil }
            return (entry.version, entry.handle, entry.handle.currentGeneration)
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
        let lists = residents.withLock { $0.entries.mapValues(\.version) }
        let ranges = selection.ranges(after: after)
        var summaries: [ListSummary] = []
        for (name, version) in lists where ranges.contains(where: { $0.contains(name) }) {
            summaries.append(ListSummary(name: name, version))
        }
        summaries.sort { ListNameRange.precedes($0.name, $1.name) }
        return Array(summaries.prefix(limit))
    }

    // MARK: - Loading

    /// The current version of `name`: held in memory, else loaded from the store (by one caller at a time:
    /// concurrent callers for the same list wait on its first load and find it loaded); `nil` when the list
    /// does not exist, which costs one lookup in the store and leaves nothing in memory.
    ///
    /// - Throws: the store's error when it cannot be read.
    public func loadedVersion(of name: String) throws -> ListVersion? {
        if let held = residents.withLock({ $0.used(name, requested: true)?.version }) { return held }
        let loaded = try withListLock(name) { position throws in try held(name, position: &position) }
        enforceBudget()
        return loaded
    }

    /// The version of `name`, loaded when not held; when the store has no such list, an empty version 0 held in
    /// memory only (the store creates the list with its first write): a list that exists before
    /// its first item, as a source's lists do (API.md §2b). Not a write: nothing is stored, no observer is told.
    ///
    /// - Throws: the store's error when it cannot be read.
    public func holdEmptyIfAbsent(_ name: String) throws -> ListVersion {
        let version = try withListLock(name) { position throws -> ListVersion in
            if let stored = try self.held(name, position: &position) { return stored }
            let empty = ListVersion.empty(limits: limits)
            publish(name, empty)
            return empty
        }
        enforceBudget()
        return version
    }

    /// Under `name`'s lock: its version, loaded from the store when it is not held.
    func held(_ name: String, position: inout Int64) throws -> ListVersion? {
        if let held = version(of: name) { return held }
        let start = ContinuousClock.now
        let (stored, storedPosition) = try store.load(list: name, limits: limits)
        let elapsed = ContinuousClock.now - start
        loads.add(1, ordering: .relaxed)
        for observer in loadObservers.withLock({ $0 }) { observer(elapsed) }
        position = storedPosition
        guard let stored else { return nil }
        publish(name, stored)
        return stored
    }

    /// Under `name`'s lock: makes `version` current, with its footprint: in proportion to the one held when the
    /// list's size stayed near it (one short hold of the registry's lock, as every write needs), else measured
    /// outside the lock (O(*n*)). Nothing else changes the list's entry meanwhile: its lock is held.
    func publish(_ name: String, _ version: ListVersion) {
        let followed = residents.withLock { residents -> Bool in
            guard let footprint = residents.entries[name]?.footprint.following(version) else { return false }
            residents.set(name, version, footprint: footprint)
            heldBytes.store(residents.bytes, ordering: .relaxed)
            return true
        }
        guard !followed else { return }
        let footprint = ListFootprint(measuring: version)
        residents.withLock { residents in
            residents.set(name, version, footprint: footprint)
            heldBytes.store(residents.bytes, ordering: .relaxed)
        }
    }

    /// Under `name`'s lock: the list is gone (deleted).
    func unpublish(_ name: String) {
        residents.withLock { residents in
            residents.remove(name)
            heldBytes.store(residents.bytes, ordering: .relaxed)
        }
    }

    // MARK: - The list locks

    /// Runs `body` under `name`'s write lock, with the log position the registry holds the list at.
    ///
    /// A list has a lock while it is held in memory or something works on it: created on first use, and dropped
    /// (retired) once the list is not held when `body` is done (a name that does not exist leaves nothing), or
    /// when the list leaves memory. A caller that waited on a lock retired meanwhile takes the list's new one.
    func withListLock<Result, Failure: Error>(
        _ name: String, _ body: (inout Int64) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        while true {
            let lock = writers.withLock { locks in
                if let lock = locks[name] { return lock }
                let lock = WriteLock()
                locks[name] = lock
                return lock
            }
            let outcome: Result? = try lock.state.withLock { state throws(Failure) -> Result? in
                guard !state.retired else { return nil }
                defer {
                    if !contains(name) {
                        state.retired = true
                        writers.withLock { locks in if locks[name] === lock { locks[name] = nil } }
                    }
                }
                defer { lock.followed.store(state.position, ordering: .releasing) }
                return try body(&state.position)
            }
            if let outcome { return outcome }
        }
    }
}

/// One list's writer lock, and the position in a shared store's log of the last change the registry
/// holds of that list (0 without a log), so that a replayed change is never applied twice; retired once the
/// list left memory (see `ListRegistry.withListLock`).
final class WriteLock: Sendable {
    struct State {
        var position: Int64 = 0
        var retired = false
    }

    let state = Mutex(State())
    /// `state.position` as of the end of the last holder's work: read without waiting for the lock (a change
    /// feed passing over its own instance's commits).
    let followed = Atomic<Int64>(0)
}
