import Synchronization

/// Where committed list versions are kept durably. The registry calls it under the list's write lock,
/// before it publishes a version: a version is visible to readers only once the store has it.
///
/// QuireStore implements it on SQLite (one instance) and on PostgreSQL (several instances sharing the
/// store); ``InMemoryListStore`` keeps nothing (the registry's memory is the only copy), for tests and a
/// service without storage.
///
/// The registry loads one list at a time, when a request first needs it (``load(list:limits:)``); nothing in the
/// service reads every list (``loadAll(limits:)`` is for tools and tests).
///
/// A shared store adds two things, which a store of one instance leaves to the defaults:
/// - conditional commits: ``commit(list:previous:next:write:)`` and ``delete(list:previous:)`` throw
///   ``StoreConflict`` when the stored list is no longer at `previous` (another instance wrote it first);
/// - a log: each commit returns its position, and ``changes(of:after:)`` reads what other instances
///   committed, so that the registry replays their writes (``ListRegistry/apply(_:)``).
public protocol ListStore: Sendable {
    /// Every stored list at its latest version, built with `limits` (tools and tests).
    func loadAll(limits: ListLimits) throws -> [String: ListVersion]

    /// Makes `next` the stored version of `list`. `previous` is the version it replaces (`nil` when the
    /// list is created), so that a store can write only what changed; `write` is what built `next` from
    /// `previous` (`nil` when the caller built it otherwise: a shared store refuses such a write).
    ///
    /// - Returns: the commit's position in the store's log, or `nil` for a store without a log.
    /// - Throws: ``StoreConflict`` when a shared store holds another version than `previous`; any other
    ///   error when the version could not be stored durably. The registry then keeps `previous`.
    ///
    /// `position` is the log position the registry holds `previous` at (0 without a log): a shared store
    /// checks it with the version: a position names one life of a list whatever its version numbers.
    func commit(list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?)
        throws -> Int64?

    /// Makes every commit of `commits` stored, in order (a list may come more than once, each commit building on
    /// the one before it), in one transaction: all of them durable once it returns, none when it throws. For a
    /// store that ``commitsTogether``; the registry calls it with the lock of every list in it held.
    ///
    /// The default commits them one after another with ``commit(list:previous:at:next:write:)``: not all or none.
    func commit(together commits: [ListCommit]) throws

    /// Whether ``commit(together:)`` stores its commits all or none, in one transaction that costs less than
    /// theirs one by one (one sync of the disk): `false` but for a SQLite file and ``InMemoryListStore``. A shared
    /// store commits conditionally and logs every commit, one by one.
    var commitsTogether: Bool { get }

    /// Removes `list` (at version `previous`) and everything stored for it, and records `previous`'s number as
    /// its ``retiredVersion(of:)``.
    ///
    /// - Returns: the log position of the delete, or `nil`.
    /// - Throws: ``StoreConflict`` as ``commit(list:previous:next:write:)`` does.
    func delete(list: String, previous: ListVersion, at position: Int64) throws -> Int64?

    /// The last version of a deleted list of this name, 0 when none was deleted (or the name was created again
    /// since): a list created again numbers its versions on from there, never from 1 anew, so that a version
    /// number (a page's `ETag`, an `If-Match`) never names the content of an earlier life of the list. A store
    /// records it in ``delete(list:previous:at:)``; a shared store also refuses (``StoreConflict``) a creation
    /// numbered at or below it.
    func retiredVersion(of list: String) throws -> UInt64

    /// The changes of `list` committed after log position `position`, oldest first (a shared store).
    func changes(of list: String, after position: Int64) throws -> [LoggedChange]

    /// One list as stored now, with its log position (`nil` version: the list does not exist).
    func load(list: String, limits: ListLimits) throws -> (version: ListVersion?, position: Int64)

    /// Called once a write of `list` that met a ``StoreConflict`` is over (committed or refused): a store
    /// may keep something for the next attempt (a shared store keeps the list locked) and drops it here.
    func endWrite(list: String)

    /// Up to `limit` of the stored lists that `selection` covers and whose names come after `after` (from the
    /// first when `nil`), in name order (byte order of their UTF-8), with their versions and sizes: every list
    /// the store holds, whether a registry has it in memory or not, read without loading a list (a store keeps
    /// each list's sizes beside it, up to date with every commit and delete).
    ///
    /// - Returns: the summaries, or `nil` when the store keeps no lists (``InMemoryListStore``): the registry's
    ///   memory is the only copy then, and answers (``ListRegistry/summaries(of:after:limit:)``).
    /// - Complexity: a store reads the ranges of ``ListSelection/ranges(after:)``, each from an index on names,
    ///   at most `limit` lists of each, and no name outside them: a page costs the same however few of the
    ///   stored lists the selection covers.
    func summaries(of selection: ListSelection, after: String?, limit: Int) throws -> [ListSummary]?

    /// Makes every commit of `commits` stored as ``commit(together:)`` does, and records `progress` in the same
    /// transaction: a source's lists and how far its log is applied are durable together, or neither is. For a
    /// store that ``keepsSources``; the registry calls it with the lock of every list in it held.
    ///
    /// A shared store checks each commit against the log position the registry holds its list at
    /// (``ListCommit/position``), as ``commit(list:previous:at:next:write:)`` does, and locks the lists in name order.
    ///
    /// - Returns: the log position of each list's last commit, for a store with a log (none otherwise).
    /// - Throws: ``SourcesNotKept`` (the default), ``StoreConflict`` when a shared store holds another version of a
    ///   list than its commit's `previous`, or the store's error; nothing is stored then.
    @discardableResult
    func commit(together commits: [ListCommit], progress: SourceProgress) throws -> [String: Int64]

    /// What the store holds of source `source` (an empty state when nothing).
    func sourceState(of source: String) throws -> SourceState

    /// The log position `source`'s lists are whole at: `nil` while no copy of its table has finished (what a standby
    /// instance asks every second, so that the lists answer `503 source-syncing` on every instance during another's
    /// copy). ``sourceState(of:)``'s position by default; a store of many rows answers without reading them.
    func sourcePosition(of source: String) throws -> UInt64?

    /// Forgets everything recorded of source `source` (its lists stay, as any list).
    func forgetSource(_ source: String) throws

    /// Whether the store records a source's progress with its lists (``commit(together:progress:)``): `true` for a
    /// SQLite file, the shared PostgreSQL store and ``InMemoryListStore``.
    var keepsSources: Bool { get }

    /// Whether the store keeps the lists (so that a list may leave the registry's memory and be loaded again):
    /// `true` but for ``InMemoryListStore``.
    var keepsLists: Bool { get }

    /// Whether every call returns at once, never waiting on a disk, a database or another instance: `false` but
    /// for ``InMemoryListStore``. The service makes the writes of such a store on the thread that received them,
    /// instead of handing each to a lane of its own and back, which cost more than the write.
    var answersAtOnce: Bool { get }

    /// Whether a call waits on nothing but this machine's disk (a sync of a local file), never on a database or
    /// another machine: `false` but for a SQLite file. The service makes a write of such a store that finds no
    /// other write under way on the thread that received it, instead of handing it to a lane and back (two
    /// thread wake-ups, a third of a lone write's time).
    var syncsLocally: Bool { get }

    /// The writes acknowledged (durable) but not yet written into the store's tables: a SQLite file's journal,
    /// which a commit applies past its limit. `nil` for a store that writes every commit where it stays.
    var backlog: StoreBacklog? { get }
}

/// Writes a store holds durably but has not yet written where they stay (``ListStore/backlog``): the
/// `quire_store_journal_entries`, `quire_store_journal_bytes` and `quire_store_journal_limit_entries` gauges.
public struct StoreBacklog: Sendable, Equatable {
    /// The writes held.
    public var entries: Int
    /// Their encoded bytes, held in memory as well until applied.
    public var bytes: Int
    /// The writes held past which a commit applies the oldest (0: every write is applied at once).
    public var limit: Int

    public init(entries: Int, bytes: Int, limit: Int) {
        (self.entries, self.bytes, self.limit) = (entries, bytes, limit)
    }
}

extension ListStore {
    public func changes(of list: String, after position: Int64) throws -> [LoggedChange] { [] }

    public func load(list: String, limits: ListLimits) throws -> (version: ListVersion?, position: Int64) {
        (try loadAll(limits: limits)[list], 0)
    }

    public func endWrite(list: String) {}

    public var keepsLists: Bool { true }

    public var answersAtOnce: Bool { false }

    public var syncsLocally: Bool { false }

    public var commitsTogether: Bool { false }

    public var keepsSources: Bool { false }

    public func commit(together commits: [ListCommit], progress: SourceProgress) throws -> [String: Int64] {
        throw SourcesNotKept()
    }

    public func sourceState(of source: String) throws -> SourceState { SourceState() }

    public func sourcePosition(of source: String) throws -> UInt64? { try sourceState(of: source).position }

    public func forgetSource(_ source: String) throws {}

    public var backlog: StoreBacklog? { nil }

    public func commit(together commits: [ListCommit]) throws {
        for commit in commits {
            _ = try self.commit(
                list: commit.list, previous: commit.previous, at: 0, next: commit.next, write: commit.write)
        }
    }
}

/// One commit of ``ListStore/commit(together:)``: `next` replaces `previous` as the version of `list`, made by
/// `write` (see ``ListStore/commit(list:previous:at:next:write:)``).
public struct ListCommit: Sendable {
    public var list: String
    public var previous: ListVersion?
    public var next: ListVersion
    public var write: ListWrite?
    /// `next.storageChanges(since: previous)`, when it was found already.
    public var changes: StorageChanges?
    /// The log position the registry holds `previous` at (0 for a store without a log): what a shared store checks
    /// the stored list against.
    public var position: Int64

    public init(
        list: String, previous: ListVersion?, next: ListVersion, write: ListWrite?, changes: StorageChanges? = nil,
        position: Int64 = 0
    ) {
        self.list = list
        self.previous = previous
        self.next = next
        self.write = write
        self.changes = changes
        self.position = position
    }
}

/// A store that keeps nothing: lists live only in the registry's memory, and so do the last versions of the
/// deleted ones (one number per deleted name, until the name is created again).
public final class InMemoryListStore: ListStore {
    private let retired = Mutex<[String: UInt64]>([:])
    private let sources = Mutex<[String: SourceState]>([:])

    public init() {}

    public func loadAll(limits: ListLimits) throws -> [String: ListVersion] { [:] }

    /// `false`: the registry's memory holds the only copy of every list.
    public var keepsLists: Bool { false }

    /// `true`: nothing is written anywhere.
    public var answersAtOnce: Bool { true }

    /// `true`: nothing is written, so nothing can be written in part.
    public var commitsTogether: Bool { true }

    /// `true`: a source's progress is kept in memory, as its lists are.
    public var keepsSources: Bool { true }

    public func commit(together commits: [ListCommit], progress: SourceProgress) throws -> [String: Int64] {
        try commit(together: commits)
        sources.withLock { $0[progress.source, default: SourceState()].record(progress) }
        return [:]
    }

    public func sourceState(of source: String) throws -> SourceState {
        sources.withLock { $0[source] ?? SourceState() }
    }

    public func forgetSource(_ source: String) throws {
        _ = sources.withLock { $0.removeValue(forKey: source) }
    }

    public func commit(
        list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?
    ) throws -> Int64? {
        if previous == nil { _ = retired.withLock { $0.removeValue(forKey: list) } }
        return nil
    }

    public func delete(list: String, previous: ListVersion, at position: Int64) throws -> Int64? {
        retired.withLock { $0[list] = max($0[list] ?? 0, previous.version) }
        return nil
    }

    public func retiredVersion(of list: String) throws -> UInt64 {
        retired.withLock { $0[list] ?? 0 }
    }

    /// `nil`: the registry's memory holds the only copy of every list.
    public func summaries(of selection: ListSelection, after: String?, limit: Int) throws -> [ListSummary]? {
        nil
    }
}

/// A store that passes every call on to `base` but for those it implements itself: a decorator (timing the
/// commits, holding them in a test). ``ListStore/commitsTogether`` and ``ListStore/keepsSources`` are not passed on (a decorator's
/// own ``ListStore/commit(list:previous:at:next:write:)`` then sees every commit) but by a decorator that says so.
public protocol ListStoreDecorator: ListStore {
    var base: any ListStore { get }
}

extension ListStoreDecorator {
    public func loadAll(limits: ListLimits) throws -> [String: ListVersion] {
        try base.loadAll(limits: limits)
    }

    public func commit(
        list: String, previous: ListVersion?, at position: Int64, next: ListVersion, write: ListWrite?
    ) throws -> Int64? {
        try base.commit(list: list, previous: previous, at: position, next: next, write: write)
    }

    public func delete(list: String, previous: ListVersion, at position: Int64) throws -> Int64? {
        try base.delete(list: list, previous: previous, at: position)
    }

    public func retiredVersion(of list: String) throws -> UInt64 {
        try base.retiredVersion(of: list)
    }

    public func changes(of list: String, after position: Int64) throws -> [LoggedChange] {
        try base.changes(of: list, after: position)
    }

    public func load(list: String, limits: ListLimits) throws -> (version: ListVersion?, position: Int64) {
        try base.load(list: list, limits: limits)
    }

    public func endWrite(list: String) {
        base.endWrite(list: list)
    }

    public func sourceState(of source: String) throws -> SourceState {
        try base.sourceState(of: source)
    }

    public func sourcePosition(of source: String) throws -> UInt64? {
        try base.sourcePosition(of: source)
    }

    public func forgetSource(_ source: String) throws {
        try base.forgetSource(source)
    }

    public var keepsLists: Bool { base.keepsLists }

    public var backlog: StoreBacklog? { base.backlog }

    public func summaries(of selection: ListSelection, after: String?, limit: Int) throws -> [ListSummary]? {
        try base.summaries(of: selection, after: after, limit: limit)
    }
}
