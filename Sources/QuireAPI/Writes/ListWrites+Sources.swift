import QuireCore
import QuireHTTP
import QuireSources
import Synchronization

/// The followers of sources (API.md §2b) are producers of their own threads: their transactions enter the write path
/// here, and the lists they keep refuse every other producer's writes (`409 list-from-source`).
extension ListWrites: SourceWriter {
    func version(of list: String) throws -> ListVersion? {
        try registry.loadedVersion(of: list)
    }

    func latestVersion(of list: String) throws -> ListVersion? {
        try registry.latestVersion(of: list)
    }

    /// Made on the follower's thread (never libmicrohttpd's: nothing else waits on it), counted among the writes
    /// under way so that shutdown waits for it, refused once the service is shutting down.
    func commit(_ writes: [ListRegistry.QueuedWrite], progress: SourceProgress)
        -> [Result<ListRegistry.Commit, ListRegistry.WriteError>]
    {
        scheduler.immediate(
            refused: { writes.map { _ in .failure(.storage("The service is shutting down: nothing was written.")) } },
            { registry.write(together: writes, progress: progress) })
    }

    func state(of source: String) throws -> SourceState {
        try registry.store.sourceState(of: source)
    }

    func position(of source: String) throws -> UInt64? {
        try registry.store.sourcePosition(of: source)
    }

    /// The follower that keeps `list`, if a source's template makes its name. Every write and every read of a list
    /// not held asks: without sources, the answer costs a look at an empty array.
    func follower(of list: String) -> SourceFollower? {
        guard sources.contains(where: { $0.list.canMake(list) }) else { return nil }
        return followers.withLock { $0 }.first { $0.makes(list) }
    }

    /// `409 list-from-source` for a write of a source's list through the API.
    func sourceRefusal(of list: String) -> Reply? {
        guard let follower = follower(of: list) else { return nil }
        return .response(
            Problem(
                .listFromSource,
                detail:
                    "The list \(list) is kept from the table \(follower.source.table) (source \(follower.source.name)): write to the table, not to the list."
            ).response)
    }
}
