public import QuireCore

/// Where a source's follower writes: the service's write path (the same one HTTP writes enter), which commits a
/// transaction's writes with the source's progress in one transaction of the store.
public protocol SourceWriter: Sendable {
    /// The current version of `list` (loaded from the store when it is not held), `nil` when it does not exist.
    func version(of list: String) throws -> ListVersion?

    /// The version of `list` as the store holds it now: ``version(of:)``, brought up to what other instances sharing
    /// the store committed since it was held.
    func latestVersion(of list: String) throws -> ListVersion?

    /// Commits `writes` and `progress` together (``ListRegistry/write(together:progress:)``), on the calling thread;
    /// each write's outcome, in order.
    func commit(_ writes: [ListRegistry.QueuedWrite], progress: SourceProgress)
        -> [Result<ListRegistry.Commit, ListRegistry.WriteError>]

    /// What the store holds of `source`.
    func state(of source: String) throws -> SourceState

    /// The position the store holds `source`'s lists whole at, `nil` while no copy has finished
    /// (``ListStore/sourcePosition(of:)``).
    func position(of source: String) throws -> UInt64?
}
