import Synchronization

// MARK: - Writing one list

extension ListRegistry {
    /// What a successful write did.
    public struct Commit: Sendable {
        /// The version now current.
        public let version: ListVersion
        /// `true` when the write created the list.
        public let created: Bool
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

    /// Under `name`'s lock and its retry loop: each attempt checks the write on the version found, makes it, has
    /// the store commit it and publishes the version made.
    private func commit(
        _ name: String, ifMatch: IfMatch?, mustExist: Bool,
        make: (ListVersion?) throws(WriteError) -> (ListWrite?, ListVersion)?
    ) throws(WriteError) -> Commit {
        var events = Events()
        // Versions replayed while catching up are announced whatever the outcome of the write.
        defer { notify(events) }
        defer { enforceBudget() }
        defer { residents.withLock { $0.markRequested(name) } }  // a write is a request of its list
        return try withListLock(name) { position throws(WriteError) -> Commit in
            try attempting(name, position: &position, events: &events) {
                previous, position, events throws(WriteError) -> Attempt<Commit> in
                let made: (ListWrite?, ListVersion)?
                do throws(WriteError) {
                    try Self.check(previous, ifMatch: ifMatch, mustExist: mustExist)
                    made = try make(previous)
                } catch {
                    return .refused(error)
                }
                guard let (write, built) = made else {
                    guard let previous else { throw .listNotFound }
                    return .done(Commit(version: previous, created: false))
                }
                let stored = Self.stored(previous)
                var next = stored == nil ? try numberedOn(built, name) : built
                do {
                    if let logged = try store.commit(
                        list: name, previous: stored, at: position, next: next, write: write)
                    {
                        position = logged
                    }
                } catch let conflict as StoreConflict {
                    return .lost(conflict)
                } catch {
                    throw WriteError(storeFailure: error)
                }
                // Ids that came and went: the same version on a table of the ids in use (the store keeps ids,
                // not keys, so it needs no new row).
                if next.wantsCompaction { next = next.compacted() }
                publish(name, next)
                events.append(name, next)
                return .done(Commit(version: next, created: previous == nil))
            }
        }
    }

    // MARK: - Writing lists together

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
    /// cannot), and the rows that change (`nil`: found where it is committed).
    public struct Prepared: Sendable {
        fileprivate let base: ListVersion
        fileprivate let outcome: Result<(next: ListVersion, changes: StorageChanges?), WriteError>
    }

    /// Makes `write` on the version of its list held now, if the list is held, for ``write(together:)`` to use
    /// when the list is still at that version then (else it makes the write again on the version it finds). So
    /// the work of a write (its ops applied, the rows that change found) is done by the thread that received it,
    /// in parallel with others, and the one thread that commits does little more than store and publish. Holds
    /// no lock: a write to the same list that comes between costs one write made twice.
    public func prepare(_ write: inout QueuedWrite) {
        guard let base = version(of: write.name) else { return }
        let outcome = Result { () throws(WriteError) -> (next: ListVersion, changes: StorageChanges?) in
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
    /// With `progress` (a source's follower: the writes of one or more of its database's transactions), the store
    /// records it in the same transaction (``ListStore/commit(together:progress:)``), even when no write is left to
    /// commit; a store that does not keep sources (``ListStore/keepsSources``) fails every write then.
    ///
    /// - Returns: each write's outcome, in the order of `writes`.
    public func write(together writes: [QueuedWrite], progress: SourceProgress? = nil) -> [Result<Commit, WriteError>] {
        if progress != nil, !store.keepsSources {
            return writes.map { _ in .failure(.storage(SourcesNotKept().description)) }
        }
        guard store.commitsTogether || progress != nil else {
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
        defer { residents.withLock { residents in for name in names { residents.markRequested(name) } } }
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
                    let stored = Self.stored(previous)
                    if stored == nil { next = try numberedOn(next, queued.name) }
                    commits.append(
                        ListCommit(
                            list: queued.name, previous: stored, next: next, write: queued.write, changes: changes,
                            position: positions[queued.name] ?? 0))
                    if !written.contains(queued.name) { made.append(index) }
                    written.insert(queued.name)
                    current[queued.name] = .some(next)
                    outcomes[index] = .success(Commit(version: next, created: previous == nil))
                } catch {
                    outcomes[index] = .failure(error)
                }
            }
            guard !commits.isEmpty || progress != nil else { return outcomes }
            do {
                if let progress {
                    for (name, logged) in try store.commit(together: commits, progress: progress) {
                        positions[name] = logged
                    }
                } else {
                    try store.commit(together: commits)
                }
            } catch {
                // A shared store's list written elsewhere since it was held (a source's follower that took over
                // from another instance): brought up to the store, so that the writes are built again on it.
                if let conflict = error as? StoreConflict, names.contains(conflict.list) {
                    try? catchUp(conflict.list, position: &positions[conflict.list, default: 0], events: &events)
                }
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

    // MARK: - Checks and locks

    /// A write's checks on the version it would replace (`nil`: the list does not exist), in the order of
    /// checks: existence for a write that needs the list, then `If-Match` (a list that does not exist matches no
    /// tag: `If-Match` cannot create a list).
    private static func check(_ previous: ListVersion?, ifMatch: IfMatch?, mustExist: Bool) throws(WriteError) {
        if mustExist && previous == nil { throw .listNotFound }
        if let ifMatch, previous.map({ ifMatch.matches($0.version) }) != true {
            throw .versionMismatch(current: previous?.version ?? 0)
        }
    }

    /// The version the store holds of a list held at `previous`: none for the empty version 0 held in memory only
    /// (``holdEmptyIfAbsent(_:)``), which the store never has: a write on it creates the list there.
    private static func stored(_ previous: ListVersion?) -> ListVersion? {
        previous.flatMap { $0.version > 0 ? $0 : nil }
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

    // MARK: - Deleting

    /// Deletes `name`.
    ///
    /// - Throws: ``WriteError/listNotFound``, ``WriteError/versionMismatch(current:)`` or a storage error.
    public func delete(_ name: String, ifMatch: IfMatch? = nil) throws(WriteError) {
        var events = Events()
        defer { notify(events) }
        try withListLock(name) { position throws(WriteError) in
            try attempting(name, position: &position, events: &events) {
                loaded, position, events throws(WriteError) -> Attempt<Void> in
                guard let previous = loaded else { return .refused(.listNotFound) }
                if let ifMatch, !ifMatch.matches(previous.version) {
                    return .refused(.versionMismatch(current: previous.version))
                }
                do {
                    if let logged = try store.delete(list: name, previous: previous, at: position) {
                        position = logged
                    }
                } catch let conflict as StoreConflict {
                    return .lost(conflict)
                } catch {
                    throw WriteError(storeFailure: error)
                }
                unpublish(name)
                events.append(name, nil)
                return .done(())
            }
        }
    }

    // MARK: - The retry loop

    /// What one attempt of a write came to, on the version of its list it found.
    private enum Attempt<Outcome> {
        /// The write is done (made, or with nothing to make): its outcome.
        case done(Outcome)
        /// The write was refused on the version found; the refusal stands unless that version was stale.
        case refused(WriteError)
        /// The store's commit lost the race to another instance's.
        case lost(StoreConflict)
    }

    /// Under `name`'s lock, the loop of every write of one list (a commit or a delete), which other instances
    /// sharing the store may race: each attempt runs on the version held, loaded first when it is not held (so
    /// that a write to it behaves as on a list held all along). A refusal is checked again once on the list as
    /// the store holds it (``recheck(_:verified:position:events:)``), and a commit that lost the race is made again
    /// on top of the winner's changes (``recover(from:attempt:position:events:)``), up to ``maximumAttempts``
    /// times; the store is told when the write that conflicted ends.
    private func attempting<Outcome>(
        _ name: String, position: inout Int64, events: inout Events,
        _ attempt: (ListVersion?, inout Int64, inout Events) throws(WriteError) -> Attempt<Outcome>
    ) throws(WriteError) -> Outcome {
        var attempts = 0
        var conflicted = false
        defer { if conflicted { store.endWrite(list: name) } }
        var verified = false
        while true {
            attempts += 1
            let previous: ListVersion?
            do { previous = try held(name, position: &position) } catch { throw WriteError(storeFailure: error) }
            switch try attempt(previous, &position, &events) {
            case .done(let outcome):
                return outcome
            case .refused(let refusal):
                if try recheck(name, verified: &verified, position: &position, events: &events) { continue }
                throw refusal
            case .lost(let conflict):
                conflicted = true
                try recover(from: conflict, attempt: attempts, position: &position, events: &events)
            }
        }
    }
}

// MARK: - Refusals

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

extension ListRegistry.QueuedWrite {
    /// A write its caller has made already: `next`, what `write` makes of `base` (a source's follower builds each
    /// list's version as it places the rows, and would otherwise have every op decoded and applied again). Used as
    /// ``prepare(_:)``'s outcome is: only when the list is still at `base`'s version when committed. The rows that
    /// change are found by the store as it commits (a follower commits on a thread other than the one that builds).
    public static func made(
        _ name: String, write: ListWrite, on base: ListVersion, next: ListVersion
    ) -> Self {
        var queued = Self(name, mustExist: true, write: write)
        queued.prepared = ListRegistry.Prepared(base: base, outcome: .success((next, nil)))
        return queued
    }
}
