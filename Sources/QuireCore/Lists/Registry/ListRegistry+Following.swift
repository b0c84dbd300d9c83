import Synchronization

extension ListRegistry {
    // MARK: - Following other instances

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
            // The empty version 0 of a name a source's template makes (``holdEmptyIfAbsent(_:)``) is held in memory
            // only: the store not having the list is what it means, not a delete.
            if stored == nil, version(of: name)?.version == 0 { return }
            try catchUp(name, position: &position, events: &events)
            if stored.map({ position < $0 }) ?? contains(name) {
                try reload(name, position: &position, events: &events)
            }
        }
    }

    /// The version of `name` as the store holds it now: loaded when it is not held, and when it is, brought up to the
    /// store's log (what other instances sharing the store committed since the position held, replayed). What a
    /// source's follower builds its first write of a list on after it took the source over from another instance.
    ///
    /// - Throws: when the store could not be read; the list stays as it was.
    public func latestVersion(of name: String) throws -> ListVersion? {
        var events = Events()
        defer { notify(events) }
        let version = try withListLock(name) { position throws -> ListVersion? in
            if contains(name) { try catchUp(name, position: &position, events: &events) }
            return try held(name, position: &position)
        }
        enforceBudget()
        return version
    }

    /// Every list held in memory, with the log position of the last change held of it (0 for a store
    /// without a log): what a shared store's change feed compares with the store's positions.
    public func followedLists() -> [(name: String, position: Int64)] {
        let names = residents.withLock { Array($0.entries.keys) }
        return writers.withLock { locks in
            names.compactMap { name in locks[name].map { (name, $0.followed.load(ordering: .acquiring)) } }
        }
    }

    // MARK: - A write that raced another instance

    /// Under the list's lock, after its commit lost the race to another instance's: counts it, gives up past
    /// ``maximumAttempts``, else replays the winner's changes so that the write is made again on top of them.
    func recover(
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
    func recheck(_ name: String, verified: inout Bool, position: inout Int64, events: inout Events)
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

    // MARK: - Replaying their changes

    /// Under `name`'s lock: the changes other instances made to it since `position`, from the store.
    func catchUp(_ name: String, position: inout Int64, events: inout Events) throws {
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

    // MARK: - Telling the observers

    /// Versions to tell the observers of, once every lock is released.
    struct Events {
        var published: [(String, ListVersion?)] = []

        mutating func append(_ name: String, _ version: ListVersion?) {
            published.append((name, version))
        }
    }

    func notify(_ events: Events) {
        guard !events.published.isEmpty else { return }
        let observers = observers.withLock { $0 }
        for (name, version) in events.published {
            for observer in observers {
                observer(name, version)
            }
        }
    }
}
