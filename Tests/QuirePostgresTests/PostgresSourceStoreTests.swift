#if PostgreSQL
    import Foundation
    import Logging
    import QuireCore
    import QuirePostgres
    import Testing

    /// A source's writes on the shared store (API.md §2b, "A cluster"): its lists and its position in its database's log
    /// committed in one transaction, read back by whichever instance follows the source next.
    @Suite(
        "PostgreSQL store: sources",
        .enabled(if: serverURL != nil, "needs QUIRE_TEST_POSTGRES_URL (make test starts one)"))
    struct PostgresSourceStoreTests {
        /// An instance's store and registry, without a change feed unless asked (a test decides what it has heard).
        final class Member {
            let store: PostgresListStore
            let registry: ListRegistry
            let feed: PostgresChangeFeed?

            init(_ database: TestDatabase, following: Bool = false) throws {
                var logger = Logger(label: "quire-test")
                logger.logLevel = .critical
                store = try PostgresListStore(settings: database.settings, logger: logger)
                registry = ListRegistry(store: store, limits: ListLimits())
                feed = following ? PostgresChangeFeed(store: store, registry: registry, logger: logger) : nil
                feed?.start()
            }

            deinit {
                feed?.stop()
                store.close()
            }
        }

        static func insert(_ id: String) -> ListWrite {
            .ops(["ops": [["op": "insertItems", "section": "s", "items": [["id": .string(id), "type": "t"]]]]])
        }

        static let created: ListWrite = .replace(["sections": [["id": "s", "items": [["id": "first", "type": "t"]]]]])

        @Test("lists and the source's position commit together; another instance replays them; the state reads back")
        func together() async throws {
            let database = try TestDatabase()
            let follower = try Member(database)
            let other = try Member(database, following: true)
            _ = try other.registry.holdEmptyIfAbsent("src-a")

            let progress = SourceProgress(
                source: "inbox", position: 1_000, replacesRows: true,
                rows: [.init(id: "first", place: "a"), .init(id: "gone", place: "x"), .init(id: "gone", place: nil)])
            let outcomes = follower.registry.write(
                together: [
                    .init("src-a", write: Self.created), .init("src-b", write: Self.created),
                    .init("src-a", write: Self.insert("second")),
                ],
                progress: progress)
            for outcome in outcomes { _ = try outcome.get() }
            #expect(try follower.store.sourceState(of: "inbox") == SourceState(position: 1_000, rows: ["first": "a"]))
            #expect(try follower.registry.loadedVersion(of: "src-a")?.itemCount == 2)

            // The other instance held the list empty at version 0: the feed brings it to the follower's versions.
            var replayed: ListVersion?
            for _ in 0..<500 {
                replayed = other.registry.version(of: "src-a")
                if replayed?.itemCount == 2 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(replayed?.itemCount == 2)
            #expect(replayed?.version == follower.registry.version(of: "src-a")?.version)

            // The next transaction, on the versions just committed (the positions the store answered).
            let next = follower.registry.write(
                together: [.init("src-b", write: Self.insert("third"))],
                progress: SourceProgress(source: "inbox", position: 2_000, rows: [.init(id: "third", place: "b")]))
            _ = try next[0].get()
            #expect(
                try follower.store.sourceState(of: "inbox")
                    == SourceState(position: 2_000, rows: ["first": "a", "third": "b"]))
            // A transaction that touched no list records its position alone; a copy begun forgets every row.
            #expect(
                follower.registry.write(together: [], progress: SourceProgress(source: "inbox", position: 3_000))
                    .isEmpty)
            #expect(try follower.store.sourceState(of: "inbox").position == 3_000)
            _ = follower.registry.write(
                together: [], progress: SourceProgress(source: "inbox", position: nil, replacesRows: true))
            #expect(try follower.store.sourceState(of: "inbox") == SourceState())

            try follower.store.forgetSource("inbox")
            #expect(try Member(database).store.sourceState(of: "inbox") == SourceState())
        }

        @Test(
            "a source's commit on a list another instance has written since is refused whole, then made on the store's")
        func takeover() throws {
            let database = try TestDatabase()
            let before = try Member(database)
            let after = try Member(database)
            _ = try before.registry.write(
                together: [.init("src-x", write: Self.created)], progress: SourceProgress(source: "s", position: 10)
            )[0].get()
            #expect(try after.registry.loadedVersion(of: "src-x")?.version == 1)
            // The instance that followed the source first goes on; the other, holding version 1, has not heard.
            _ = try before.registry.write(
                together: [.init("src-x", write: Self.insert("b"))],
                progress: SourceProgress(source: "s", position: 20, rows: [.init(id: "b", place: "x")])
            )[0].get()

            let refused = after.registry.write(
                together: [.init("src-x", write: Self.insert("c")), .init("src-y", write: Self.created)],
                progress: SourceProgress(source: "s", position: 30, rows: [.init(id: "c", place: "x")]))
            for outcome in refused {
                guard case .failure(.storage) = outcome else {
                    Issue.record("a commit on a stale version was not refused: \(outcome)")
                    continue
                }
            }
            #expect(try after.store.sourceState(of: "s") == SourceState(position: 20, rows: ["b": "x"]))
            #expect(try after.store.rowCounts(of: "src-y") == (0, 0))
            // The refusal brought the list up to the store: the writes made again build on version 2.
            #expect(after.registry.version(of: "src-x")?.version == 2)
            let made = after.registry.write(
                together: [.init("src-x", write: Self.insert("c")), .init("src-y", write: Self.created)],
                progress: SourceProgress(source: "s", position: 30, rows: [.init(id: "c", place: "x")]))
            #expect(try made.map { try $0.get().version.version } == [3, 1])
            #expect(try after.store.rowCounts(of: "src-x").items == 3)
            #expect(try after.store.sourceState(of: "s").position == 30)
            #expect(try after.registry.latestVersion(of: "src-x")?.version == 3)
            #expect(try before.registry.latestVersion(of: "src-x")?.version == 3)
        }
    }
#endif
