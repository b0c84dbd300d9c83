import QuireCore

/// The kind of store a registry's writes wait on, which decides where they run (``WritePlacement``).
enum StoreKind: Sendable, CaseIterable {
    /// A store that answers every call at once (``ListStore/answersAtOnce``, the store in memory): a write waits on
    /// nothing but its list's lock, held briefly by another write.
    case answersAtOnce
    /// A store that waits on nothing but this machine's disk (``ListStore/syncsLocally``, a SQLite file): a write
    /// waits on its sync, which may stall with the disk but never stops answering.
    case syncsLocally
    /// Any other store (a database): a write waits on round trips, and on nothing at all when the database goes
    /// away, up to its statement timeout and more.
    case remote

    /// The kind of `registry`'s store. A store answers at once or syncs locally, not both: it has a disk to sync or
    /// it has not.
    init(of registry: ListRegistry) {
        self =
            registry.storeAnswersAtOnce ? .answersAtOnce : registry.storeSyncsLocally ? .syncsLocally : .remote
    }
}

/// Where a write runs, decided once for each kind of store and kind of write; ``WriteScheduler/run(_:at:)`` follows
/// it, asking what else is under way only where the placement depends on it.
///
/// - A store in memory (``InMemoryListStore``): a write is made here, on the thread that received it, at once: it
///   waits on nothing but its list's lock, and libmicrohttpd's threads make writes of different lists side by side.
///   Handed to the writer of batches, each write would cost a suspended connection resumed and two threads woken,
///   more than the write itself (docs/performance.md, "Writes").
/// - A store on this machine's disk: a write is made here when no other write is under way
///   (``WriteScheduler/alone(refused:_:)``); else by the store's one writer, which makes every write queued
///   meanwhile and commits them in one transaction, one sync for all (``WriteScheduler/together(_:in:answer:)``).
/// - A database: on the lane of its list (``WriteScheduler/deferred(list:_:)``), so that a store that stops
///   answering holds up nothing but that lane's writes. One writer would serialize every write's round trips.
/// - A delete is never batched (``ListRegistry/write(together:)`` makes writes only): in memory it is made here at
///   once, as a write; on this machine's disk here when alone, else on its list's lane; in a database on its list's
///   lane.
enum WritePlacement: Equatable, Sendable {
    /// On the calling thread, at once, whatever else is under way.
    case here
    /// On the calling thread when no other write is under way and no write made so was slow lately (the disk
    /// stalled); else `otherwise`.
    case hereWhenAlone(otherwise: Elsewhere)
    /// On the lane of its list.
    case lane

    /// Where a write goes that is not made on the calling thread.
    enum Elsewhere: Equatable, Sendable {
        /// The writer of batches, with every write queued beside it (``WriteScheduler/together(_:in:answer:)``).
        case batchWriter
        /// The lane of its list (``WriteScheduler/deferred(list:_:)``).
        case lane
    }

    /// Where one write runs, once it is known whether the calling thread is free for it.
    enum Place: Equatable, Sendable {
        case here
        case batchWriter
        case lane
    }

    /// The placement of a write (a replacement or a batch of ops) of a store of `kind`.
    static func write(in kind: StoreKind) -> WritePlacement {
        switch kind {
        case .answersAtOnce: .here
        case .syncsLocally: .hereWhenAlone(otherwise: .batchWriter)
        case .remote: .lane
        }
    }

    /// The placement of a delete of a list of a store of `kind`.
    static func delete(in kind: StoreKind) -> WritePlacement {
        switch kind {
        case .answersAtOnce: .here
        case .syncsLocally: .hereWhenAlone(otherwise: .lane)
        case .remote: .lane
        }
    }

    /// Where a write so placed runs: `aloneGranted` says whether the calling thread is free for it (no other
    /// write under way, and no slow sync lately), which only ``hereWhenAlone(otherwise:)`` asks.
    func place(aloneGranted: Bool) -> Place {
        switch self {
        case .here: .here
        case .hereWhenAlone(let otherwise):
            aloneGranted ? .here : otherwise == .batchWriter ? .batchWriter : .lane
        case .lane: .lane
        }
    }
}
