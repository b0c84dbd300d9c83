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
    /// What a successful write did.
    public struct Commit: Sendable {
        /// The version now current.
        public let version: ListVersion
        /// `true` when the write created the list.
        public let created: Bool
    }

    private let residents = Mutex(Residents())
    private let writers = Mutex<[String: WriteLock]>([:])
    private let observers = Mutex<[@Sendable (String, ListVersion?) -> Void]>([])
    private let loadObservers = Mutex<[@Sendable (Duration) -> Void]>([])
    private let store: any ListStore
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
    private let evicting = Atomic<Bool>(false)
    /// The residents' `bytes`, stored under their lock by every change: read without it by ``enforceBudget()``,
    /// which every write calls.
    private let heldBytes = Atomic<Int>(0)
    private let overBudget = Atomic<Bool>(false)
    private let loads = Atomic<Int>(0)
    private let evictions = Atomic<Int>(0)
    private let idleReleases = Atomic<Int>(0)

    /// - Parameters:
    ///   - memoryBudget: see ``memoryBudget``.
    ///   - idleTimeout: see ``idleTimeout``; `nil` or not positive: never.
    public init(store: any ListStore, limits: ListLimits, memoryBudget: Int = 0, idleTimeout: Duration? = nil) {
        self.store = store
        self.limits = limits
        self.memoryBudget = store.keepsLists ? max(0, memoryBudget) : 0
        self.idleTimeout = store.keepsLists ? idleTimeout.flatMap { $0 > .zero ? $0 : nil } : nil
    }

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

    /// Under `name`'s lock: its version, loaded from the store when it is not held.
    private func held(_ name: String, position: inout Int64) throws -> ListVersion? {
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
    private func publish(_ name: String, _ version: ListVersion) {
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
    private func unpublish(_ name: String) {
        residents.withLock { residents in
            residents.remove(name)
            heldBytes.store(residents.bytes, ordering: .relaxed)
        }
    }

    /// A list as a cache of what is made from its versions holds it: whether the version something was made
    /// from is still the list's current one is one atomic load, with no lookup of the list by its name.
    ///
    /// A list's handle lasts as long as the list stays in memory: the list deleted or out of memory, its handle
    /// is retired (never current again), and the list created again or loaded again under the name has a new one.
    public final class ListHandle: Sendable {
        private let generation = Atomic<UInt64>(0)
        /// Set by every use: ``clockUse`` cleared by the eviction's hand as it passes (a second chance),
        /// ``requestUse`` (a request, not replication) by the idle release's pass.
        private let uses = Atomic<UInt8>(ListHandle.clockUse | ListHandle.requestUse)
        private static let clockUse: UInt8 = 1
        private static let requestUse: UInt8 = 2

        /// The generation of the list's current version: numbered process-wide, so that no two versions of any
        /// lists share one; 0 once the list is gone.
        public var currentGeneration: UInt64 { generation.load(ordering: .acquiring) }

        /// Whether `generation` is the list's current one; counts as a use of the list when it is (a cache
        /// answering from it keeps the list in memory).
        public func isCurrent(_ generation: UInt64) -> Bool {
            guard self.generation.load(ordering: .acquiring) == generation else { return false }
            markUsed()
            return true
        }

        /// The list was used by a request: the eviction's hand passes it over once, and it is not idle. A load
        /// before the store, so that lists in constant use do not write the same cache line from every thread.
        public func markUsed() {
            mark(Self.clockUse | Self.requestUse)
        }

        /// The list was read by something else than a request (replication, an observer): only the eviction's
        /// hand passes it over once.
        fileprivate func markSeen() {
            mark(Self.clockUse)
        }

        private func mark(_ bits: UInt8) {
            if uses.load(ordering: .relaxed) & bits != bits { uses.bitwiseOr(bits, ordering: .relaxed) }
        }

        /// Whether the list was used since the last call (and clears the mark).
        fileprivate func takeUse() -> Bool {
            take(Self.clockUse)
        }

        /// Whether a request used the list since the last call (and clears the mark).
        fileprivate func takeRequest() -> Bool {
            take(Self.requestUse)
        }

        private func take(_ bit: UInt8) -> Bool {
            uses.load(ordering: .relaxed) & bit != 0 && uses.bitwiseAnd(~bit, ordering: .relaxed).oldValue & bit != 0
        }

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
        defer { enforceBudget() }
        defer { _ = residents.withLock { $0.used(name, requested: true) } }  // a write is a request of its list
        return try withListLock(name) { position throws(WriteError) -> Commit in
            var attempt = 0
            var conflicted = false
            defer { if conflicted { store.endWrite(list: name) } }
            var verified = false
            while true {
                attempt += 1
                // A list not held is loaded first (a write to it behaves as on a list held all along).
                let previous: ListVersion?
                do { previous = try held(name, position: &position) } catch { throw WriteError(storeFailure: error) }
                let made: (ListWrite?, ListVersion)?
                do throws(WriteError) {
                    try Self.check(previous, ifMatch: ifMatch, mustExist: mustExist)
                    made = try make(previous)
                } catch {
                    if try recheck(name, verified: &verified, position: &position, events: &events) { continue }
                    throw error
                }
                guard let (write, built) = made else {
                    guard let previous else { throw .listNotFound }
                    return Commit(version: previous, created: false)
                }
                var next = previous == nil ? try numberedOn(built, name) : built
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
                publish(name, next)
                events.append(name, next)
                return Commit(version: next, created: previous == nil)
            }
        }
    }

    /// One write of ``write(together:)``: the arguments of ``write(_:ifMatch:mustExist:change:)``, the write known.
    public struct QueuedWrite: Sendable {
        public var name: String
        public var ifMatch: IfMatch?
        public var mustExist: Bool
        public var write: ListWrite
        /// The write made beforehand on the version then held (``prepare(_:)``).
        public fileprivate(set) var prepared: Prepared?

        public init(_ name: String, ifMatch: IfMatch? = nil, mustExist: Bool = false, write: ListWrite) {
            self.name = name
            self.ifMatch = ifMatch
            self.mustExist = mustExist
            self.write = write
        }
    }

    /// A queued write made on the version held when it was read: what it builds from that version (or why it
    /// cannot), and the rows that change.
    public struct Prepared: Sendable {
        fileprivate let base: ListVersion
        fileprivate let outcome: Result<(next: ListVersion, changes: StorageChanges), WriteError>
    }

    /// Makes `write` on the version of its list held now, if the list is held, for ``write(together:)`` to use
    /// when the list is still at that version then (else it makes the write again on the version it finds). So
    /// the work of a write (its ops applied, the rows that change found) is done by the thread that received it,
    /// in parallel with others, and the one thread that commits does little more than store and publish. Holds
    /// no lock: a write to the same list that comes between costs one write made twice.
    public func prepare(_ write: inout QueuedWrite) {
        guard let base = version(of: write.name) else { return }
        let outcome = Result { () throws(WriteError) -> (next: ListVersion, changes: StorageChanges) in
            let next = try write.write.apply(to: base, limits: limits)
            return (next, next.storageChanges(since: base, keepsLabels: write.write.keepsLabels))
        }
        write.prepared = Prepared(base: base, outcome: outcome)
    }

    /// Makes `writes` in their order, each checked and built as ``write(_:ifMatch:mustExist:change:)`` does it, and
    /// commits them in one transaction of the store (``ListStore/commit(together:)``): one sync of the disk for
    /// them all (group commit).
    ///
    /// - A write to a list written before it in the batch builds on that write's version (its `If-Match` is checked
    ///   against it).
    /// - A write refused (`404`, `412`, `422`) refuses only itself.
    /// - When the transaction fails, nothing changes, and every write fails with the store's error but those refused
    ///   on the version held before the batch (a refusal on a version the batch built does not stand either).
    /// - The lock of every list in the batch is held from the first write built until the last version is
    ///   published (taken in name order, the one order of every batch; any other caller holds one list's lock at a
    ///   time): no reader sees a version before it is durable, and no other write of these lists comes between.
    ///
    /// A store that does not commit together (``ListStore/commitsTogether`` `false`: a shared store, whose commits
    /// are conditional and logged one by one) makes them one after another.
    ///
    /// - Returns: each write's outcome, in the order of `writes`.
    public func write(together writes: [QueuedWrite]) -> [Result<Commit, WriteError>] {
        guard store.commitsTogether else {
            return writes.map { queued in
                Result { () throws(WriteError) -> Commit in
                    try write(queued.name, ifMatch: queued.ifMatch, mustExist: queued.mustExist) { _ in queued.write }
                }
            }
        }
        let names = Set(writes.map(\.name)).sorted()
        var events = Events()
        defer { notify(events) }
        defer { enforceBudget() }
        defer { residents.withLock { residents in for name in names { _ = residents.used(name, requested: true) } } }
        var positions: [String: Int64] = [:]
        return withListLocks(names[...], positions: &positions) { positions in
            var outcomes = [Result<Commit, WriteError>](repeating: .failure(.listNotFound), count: writes.count)
            // Each list's version as the batch goes: the held one, then each write's.
            var current: [String: ListVersion?] = [:]
            var commits: [ListCommit] = []
            // The writes built, and those refused on a version one of them built: neither stands if the batch fails.
            var made: [Int] = []
            var written = Set<String>()
            for (index, queued) in writes.enumerated() {
                if written.contains(queued.name) { made.append(index) }
                do throws(WriteError) {
                    let previous: ListVersion?
                    if let known = current[queued.name] {
                        previous = known
                    } else {
                        do {
                            previous = try held(queued.name, position: &positions[queued.name, default: 0])
                        } catch {
                            throw WriteError(storeFailure: error)
                        }
                        current[queued.name] = .some(previous)
                    }
                    try Self.check(previous, ifMatch: queued.ifMatch, mustExist: queued.mustExist)
                    var next: ListVersion
                    var changes: StorageChanges?
                    // A list's versions are numbered on across its lives (``ListStore/retiredVersion(of:)``): its
                    // version number names its content.
                    if let prepared = queued.prepared, prepared.base.version == previous?.version {
                        (next, changes) = try prepared.outcome.get()
                    } else {
                        next = try queued.write.apply(to: previous, limits: limits)
                    }
                    if previous == nil { next = try numberedOn(next, queued.name) }
                    commits.append(
                        ListCommit(
                            list: queued.name, previous: previous, next: next, write: queued.write, changes: changes))
                    if !written.contains(queued.name) { made.append(index) }
                    written.insert(queued.name)
                    current[queued.name] = .some(next)
                    outcomes[index] = .success(Commit(version: next, created: previous == nil))
                } catch {
                    outcomes[index] = .failure(error)
                }
            }
            guard !commits.isEmpty else { return outcomes }
            do {
                try store.commit(together: commits)
            } catch {
                let failure = WriteError(storeFailure: error)
                for index in made { outcomes[index] = .failure(failure) }
                return outcomes
            }
            // Each list's last version is published; the observers are told once a list, as of a change feed.
            for name in names where written.contains(name) {
                guard case .some(.some(var last)) = current[name] else { continue }
                if last.wantsCompaction { last = last.compacted() }
                publish(name, last)
                events.append(name, last)
            }
            return outcomes
        }
    }

    /// A write's checks on the version it would replace (`nil`: the list does not exist), in the order of
    /// checks: existence for a write that needs the list, then `If-Match` (a list that does not exist matches no
    /// tag: `If-Match` cannot create a list).
    private static func check(_ previous: ListVersion?, ifMatch: IfMatch?, mustExist: Bool) throws(WriteError) {
        if mustExist && previous == nil { throw .listNotFound }
        if let ifMatch, previous.map({ ifMatch.matches($0.version) }) != true {
            throw .versionMismatch(current: previous?.version ?? 0)
        }
    }

    /// `version`, the first of a list `name` creates, numbered on from the last version of a list of that name
    /// deleted before (``ListStore/retiredVersion(of:)``), never from 1 anew.
    private func numberedOn(_ version: ListVersion, _ name: String) throws(WriteError) -> ListVersion {
        let retired: UInt64
        do { retired = try store.retiredVersion(of: name) } catch { throw WriteError(storeFailure: error) }
        return version.version <= retired ? version.renumbered(as: retired + 1) : version
    }

    /// Runs `body` under the write locks of `names` (taken in their order), with the log positions the registry
    /// holds those lists at.
    private func withListLocks<Result>(
        _ names: ArraySlice<String>, positions: inout [String: Int64], _ body: (inout [String: Int64]) -> Result
    ) -> Result {
        guard let name = names.first else { return body(&positions) }
        return withListLock(name) { position in
            positions[name] = position
            defer { position = positions[name] ?? position }
            return withListLocks(names.dropFirst(), positions: &positions, body)
        }
    }

    /// Deletes `name`.
    ///
    /// - Throws: ``WriteError/listNotFound``, ``WriteError/versionMismatch(current:)`` or a storage error.
    public func delete(_ name: String, ifMatch: IfMatch? = nil) throws(WriteError) {
        var events = Events()
        defer { notify(events) }
        try withListLock(name) { position throws(WriteError) in
            var attempt = 0
            var conflicted = false
            defer { if conflicted { store.endWrite(list: name) } }
            var verified = false
            while true {
                attempt += 1
                let previous: ListVersion
                let loaded: ListVersion?
                do { loaded = try held(name, position: &position) } catch { throw WriteError(storeFailure: error) }
                do throws(WriteError) {
                    guard let held = loaded else { throw .listNotFound }
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
                unpublish(name)
                events.append(name, nil)
                return
            }
        }
    }

    /// Brings `name`, if this registry holds it, to the store's latest change of it: a shared store's change feed
    /// calls it for each list another instance wrote (a notification) and for each list whose stored position
    /// differs from the one held (the sweep after a reconnection). The changes after the position held are read
    /// from the store's log and replayed on the version held (the list is not reloaded); when the log no longer
    /// has them (trimmed past its retention), or `stored` is `nil` (the list is gone from the store) and the
    /// replay did not remove it, the list is read again from the store. A list not held, or held at `stored`
    /// already (this instance's own commit), costs no lock.
    ///
    /// Observers are told of every version published, as for local writes.
    ///
    /// - Parameter stored: the position of the list's latest change in the store's log; `nil` when the store
    ///   no longer has the list.
    /// - Throws: when the store could not be read; the list stays as it was.
    public func follow(_ name: String, to stored: Int64?) throws {
        guard let lock = writers.withLock({ $0[name] }) else { return }
        if let stored, lock.followed.load(ordering: .acquiring) >= stored { return }
        var events = Events()
        defer { notify(events) }
        try withListLock(name) { position throws in
            guard contains(name) else { return }
            if let stored, position >= stored { return }
            try catchUp(name, position: &position, events: &events)
            if stored.map({ position < $0 }) ?? contains(name) {
                try reload(name, position: &position, events: &events)
            }
        }
    }

    /// Every list held in memory, with the log position of the last change held of it (0 for a store
    /// without a log): what a shared store's change feed compares with the store's positions.
    public func followedLists() -> [(name: String, position: Int64)] {
        let names = residents.withLock { Array($0.entries.keys) }
        return writers.withLock { locks in
            names.compactMap { name in locks[name].map { (name, $0.followed.load(ordering: .acquiring)) } }
        }
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
            unpublish(name)
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
            publish(name, next)
            position = change.position
            events.append(name, next)
            return
        }
        // A change missed, or one that does not replay here.
        try reload(name, position: &position, events: &events)
    }

    /// Under the list's lock: the list as the store holds it now, instead of the version held.
    private func reload(_ name: String, position: inout Int64, events: inout Events) throws {
        let (stored, storedPosition) = try store.load(list: name, limits: limits)
        loads.add(1, ordering: .relaxed)
        if let stored { publish(name, stored) } else { unpublish(name) }
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

    /// Runs `body` under `name`'s write lock, with the log position the registry holds the list at.
    ///
    /// A list has a lock while it is held in memory or something works on it: created on first use, and dropped
    /// (retired) once the list is not held when `body` is done (a name that does not exist leaves nothing), or
    /// when the list leaves memory. A caller that waited on a lock retired meanwhile takes the list's new one.
    private func withListLock<Result, Failure: Error>(
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

    /// Makes lists leave memory, the least recently used unpinned first, until the held bytes are within the
    /// budget; one caller at a time (the others go on: the one running brings the count down for them). A list
    /// whose lock is busy (a write, a load) is in use: passed over. Every load and write calls it; call it when
    /// pins were released (sessions ended) to know whether ``isOverBudget`` still holds.
    public func enforceBudget() {
        guard memoryBudget > 0 else { return }
        guard heldBytes.load(ordering: .relaxed) > memoryBudget else {
            if overBudget.load(ordering: .relaxed) { overBudget.store(false, ordering: .relaxed) }
            return
        }
        guard !evicting.exchange(true, ordering: .acquiring) else { return }
        defer { evicting.store(false, ordering: .releasing) }
        var passedOver = 0
        while true {
            let (bytes, victim) = residents.withLock { residents in
                (residents.bytes, residents.bytes > memoryBudget ? residents.nextVictim(pins: pins) : nil)
            }
            guard bytes > memoryBudget else {
                overBudget.store(false, ordering: .relaxed)
                return
            }
            guard let victim, passedOver <= 2 * resident.lists else {
                overBudget.store(true, ordering: .relaxed)
                return
            }
            if evict(victim.name, victim.handle) {
                evictions.add(1, ordering: .relaxed)
            } else {
                passedOver += 1
            }
        }
    }

    /// Makes the lists leave memory that no request used (no read, no write here) and no session held for
    /// ``idleTimeout`` until `now`: called about once a second (the service's housekeeping). A list whose lock is
    /// busy is in use: passed over. Nothing when ``idleTimeout`` is `nil`.
    ///
    /// - Complexity: O(*n*) for the *n* lists held.
    public func releaseIdle(now: ContinuousClock.Instant = .now) {
        guard let idleTimeout else { return }
        let idle = residents.withLock { $0.unrequested(for: idleTimeout, now: now, pins: pins) }
        for (name, handle) in idle where evict(name, handle) {
            idleReleases.add(1, ordering: .relaxed)
        }
    }

    /// `name` leaves memory if it is still held with `handle`, unpinned and its lock free; `false` otherwise.
    private func evict(_ name: String, _ handle: ListHandle) -> Bool {
        guard let lock = writers.withLock({ $0[name] }) else { return false }
        return lock.state.withLockIfAvailable { state -> Bool in
            guard !state.retired else { return false }
            // Pins are read under the residents' lock, as a session's creation reads the list after pinning it.
            let removed = residents.withLock { residents in
                guard residents.entries[name]?.handle === handle, !pins.isPinned(name) else { return false }
                residents.remove(name)
                heldBytes.store(residents.bytes, ordering: .relaxed)
                return true
            }
            guard removed else { return false }
            state.retired = true
            writers.withLock { locks in if locks[name] === lock { locks[name] = nil } }
            return true
        } ?? false
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
/// holds of that list (0 without a log), so that a replayed change is never applied twice; retired once the
/// list left memory (see `ListRegistry.withListLock`).
private final class WriteLock: Sendable {
    struct State {
        var position: Int64 = 0
        var retired = false
    }

    let state = Mutex(State())
    /// `state.position` as of the end of the last holder's work: read without waiting for the lock (a change
    /// feed passing over its own instance's commits).
    let followed = Atomic<Int64>(0)
}

/// The lists held in memory: each one's current version, handle (advanced with every version it is given) and
/// footprint, with their total; and the ring the eviction's hand goes round (CLOCK).
private struct Residents {
    struct Entry {
        var version: ListVersion
        let handle: ListRegistry.ListHandle
        var footprint: ListFootprint
        /// When the idle release last found the list requested or held by a session (or it came in).
        var usedAt = ContinuousClock.now
    }

    private(set) var entries: [String: Entry] = [:]
    private(set) var bytes = 0
    private(set) var items = 0
    /// Every list held, in the order they came in (a list that left and came back has a new handle: its old
    /// place is stale and dropped when the hand reaches it).
    private var ring: [(name: String, handle: ListRegistry.ListHandle)] = []
    private var hand = 0

    /// The entry of `name`, marked used: by a request (`requested`), or only seen (replication, observers: the
    /// eviction's hand passes it over once, but it may still go idle).
    func used(_ name: String, requested: Bool = false) -> Entry? {
        guard let index = entries.index(forKey: name) else { return nil }
        let entry = entries.values[index]
        if requested { entry.handle.markUsed() } else { entry.handle.markSeen() }
        return entry
    }

    /// The lists that no request used and no session held for `idle` until `now` (the others' time of use
    /// moved to `now` when they were used since the last call).
    ///
    /// - Complexity: O(*n*) for the *n* lists held.
    mutating func unrequested(for idle: Duration, now: ContinuousClock.Instant, pins: ListPins)
        -> [(name: String, handle: ListRegistry.ListHandle)]
    {
        var found: [(name: String, handle: ListRegistry.ListHandle)] = []
        var index = entries.values.startIndex
        while index != entries.values.endIndex {
            let (name, entry) = entries[index]
            if entry.handle.takeRequest() || pins.isPinned(name) {
                entries.values[index].usedAt = now
            } else if now - entry.usedAt >= idle {
                found.append((name, entry.handle))
            }
            entries.values.formIndex(after: &index)
        }
        return found
    }

    mutating func set(_ name: String, _ version: ListVersion, footprint: ListFootprint) {
        if var entry = entries.removeValue(forKey: name) {
            bytes += footprint.bytes - entry.footprint.bytes
            items += version.itemCount - entry.version.itemCount
            entry.version = version
            entry.footprint = footprint
            entry.handle.advance()
            entries[name] = entry
        } else {
            let handle = ListRegistry.ListHandle()
            handle.advance()
            entries[name] = Entry(version: version, handle: handle, footprint: footprint)
            bytes += footprint.bytes
            items += version.itemCount
            ring.append((name, handle))
            compactRing()
        }
    }

    mutating func remove(_ name: String) {
        guard let entry = entries.removeValue(forKey: name) else { return }
        bytes -= entry.footprint.bytes
        items -= entry.version.itemCount
        entry.handle.retire()
    }

    /// The next list the hand finds neither used since it last passed nor pinned; after two turns of the ring
    /// without one (every list in constant use), the next list not pinned; `nil` when every list is pinned.
    ///
    /// - Complexity: O(1) amortized per list passed.
    mutating func nextVictim(pins: ListPins) -> (name: String, handle: ListRegistry.ListHandle)? {
        var passed = 0
        while !ring.isEmpty && passed < 3 * ring.count {
            if hand >= ring.count { hand = 0 }
            let (name, handle) = ring[hand]
            guard entries[name]?.handle === handle else {
                ring.swapAt(hand, ring.count - 1)
                ring.removeLast()
                continue
            }
            passed += 1
            hand += 1
            let secondChance = passed <= 2 * ring.count && handle.takeUse()
            if secondChance || pins.isPinned(name) { continue }
            return (name, handle)
        }
        return nil
    }

    /// Drops the ring's stale places (lists that left memory or were deleted) once they are half of it, so that
    /// the ring follows the lists held even while nothing is evicted.
    private mutating func compactRing() {
        guard ring.count > 2 * entries.count + 64 else { return }
        ring.removeAll { entries[$0.name]?.handle !== $0.handle }
        hand = 0
    }
}
