// Built with the PostgreSQL trait only (the default): without it there is no QuirePostgres to test.
#if PostgreSQL
    import Foundation
    import Logging
    import QuireAPI
    import QuireCore
    import QuireHTTP
    import QuirePostgres
    import QuireTesting
    import Testing

    @Suite(
        "GET /v1/lists on PostgreSQL", .serialized,
        .enabled(if: serverURL != nil, "needs QUIRE_TEST_POSTGRES_URL (make test starts one)"))
    struct PostgresListingTests {
        /// A database whose collation is not byte order (ICU's en-US puts `a_b` before `a-b`, and `aB` after `ab`):
        /// the listing must not depend on it.
        static func database() throws -> TestDatabase {
            try TestDatabase(options: "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'")
        }

        static func store(_ database: TestDatabase) throws -> PostgresListStore {
            var logger = Logger(label: "quire-test")
            logger.logLevel = .critical
            return try PostgresListStore(settings: database.settings, logger: logger)
        }

        /// The tables of the release before list sizes, as it created them.
        static let previousSchema = [
            "CREATE TABLE quire_feed (id integer PRIMARY KEY CHECK (id = 1), position bigint NOT NULL)",
            "INSERT INTO quire_feed (id, position) VALUES (1, 0)",
            "CREATE TABLE quire_list (name text PRIMARY KEY, version bigint NOT NULL, position bigint NOT NULL)",
            """
            CREATE TABLE quire_section (list text NOT NULL, id text NOT NULL, position bytea NOT NULL, header bytea,
                footer bytea, PRIMARY KEY (list, id))
            """,
            """
            CREATE TABLE quire_item (list text NOT NULL, nested smallint NOT NULL, parent text NOT NULL,
                position bytea NOT NULL, id text NOT NULL, body bytea NOT NULL, PRIMARY KEY (list, nested, parent, position))
            """,
            "CREATE UNIQUE INDEX quire_item_by_id ON quire_item (list, id)",
            """
            CREATE TABLE quire_log (position bigint PRIMARY KEY, list text NOT NULL, version bigint NOT NULL,
                kind text NOT NULL, body bytea, committed_at double precision NOT NULL)
            """,
            "CREATE INDEX quire_log_by_list ON quire_log (list, position)",
            "CREATE TABLE quire_retired (name text PRIMARY KEY, version bigint NOT NULL)",
        ]

        /// The rows of the lists of ``listingFamilies``, as the release before list sizes wrote them (no sizes), in
        /// three statements. (10,000 commits through the store would take a minute.)
        static let familyRows: [String] = {
            let families = listingFamilies.map { "('\($0.prefix)', \($0.count))" }.joined(separator: ", ")
            let lists = """
                WITH lists AS (
                    SELECT prefix || i AS name, i FROM (VALUES \(families)) AS families (prefix, count),
                        generate_series(0, count - 1) AS i)
                """
            let position = "decode(lpad(to_hex(%@ + 1), 8, '0'), 'hex')"
            return [
                "\(lists) INSERT INTO quire_list (name, version, position) SELECT name, 1, 0 FROM lists",
                """
                \(lists) INSERT INTO quire_section (list, id, position)
                SELECT name, 's' || k, \(position.replacingOccurrences(of: "%@", with: "k"))
                FROM lists, generate_series(0, i % 3) AS k
                """,
                """
                \(lists) INSERT INTO quire_item (list, nested, parent, position, id, body)
                SELECT name, 0, 's0', \(position.replacingOccurrences(of: "%@", with: "j")), 'i' || j,
                    convert_to('{"id":"i' || j || '","type":"t","data":null}', 'UTF8')
                FROM lists, generate_series(0, i % 4 - 1) AS j
                UNION ALL
                SELECT name, 1, 'i0', decode('00000001', 'hex'), 'c', convert_to('{"id":"c","type":"t","data":null}', 'UTF8')
                FROM lists WHERE i % 5 = 0 AND i % 4 > 0
                """,
            ]
        }()

        @Test(
            "pages through 10,000 stored lists that are not in memory, by prefix and scopes: each once, in byte order")
        func paging() async throws {
            let database = try Self.database()
            let store = try Self.store(database)
            defer { store.close() }
            let service = try await ListingService(store: store)
            defer { service.stop() }
            // Written by another program (as an earlier release writes, without sizes): listed from the database,
            // their sizes counted from their rows.
            for statement in Self.familyRows { try database.execute(statement) }
            try await service.checkPagingThroughTheFamilies()
        }

        @Test("the listed sizes and versions follow writes and deletes, and a row an earlier release wrote since")
        func sizes() async throws {
            let database = try Self.database()
            let store = try Self.store(database)
            defer { store.close() }
            let service = try await ListingService(store: store)
            defer { service.stop() }
            try service.checkSizesFollowWrites()
            // An instance of the earlier release, in a rolling upgrade, writes `sized-tree` again: version 7, a third
            // section, and the sizes the list row holds are those of version 6. It is counted from its rows.
            try database.execute("UPDATE quire_list SET version = 7 WHERE name = 'sized-tree'")
            try database.execute(
                "INSERT INTO quire_section (list, id, position) VALUES ('sized-tree', 'c', decode('00000009', 'hex'))")
            #expect(
                try service.walk(prefix: "sized-").last
                    == ListSummary(name: "sized-tree", version: 7, sections: 3, items: 5))
        }

        @Test(
            "a database of the previous release gains the sizes' columns, lists its lists, and stores sizes on writes")
        func previousSchema() async throws {
            let database = try Self.database()
            for statement in Self.previousSchema { try database.execute(statement) }
            try database.execute(
                "INSERT INTO quire_list (name, version, position) VALUES ('old-tree', 7, 0), ('Old-empty', 1, 0)")
            try database.execute(
                "INSERT INTO quire_section (list, id, position) VALUES ('old-tree', 'a', decode('00000001', 'hex'))")
            try database.execute(
                """
                INSERT INTO quire_item (list, nested, parent, position, id, body) VALUES
                    ('old-tree', 0, 'a', decode('00000001', 'hex'), '1', convert_to('{"id":"1","type":"t","data":null}', 'UTF8')),
                    ('old-tree', 1, '1', decode('00000001', 'hex'), '1a', convert_to('{"id":"1a","type":"t","data":null}', 'UTF8'))
                """)
            let store = try Self.store(database)
            defer { store.close() }
            let expected = [
                ListSummary(name: "Old-empty", version: 1, sections: 0, items: 0),
                ListSummary(name: "old-tree", version: 7, sections: 1, items: 2),
            ]
            #expect(try store.summaries(of: .all, after: nil, limit: 10) == expected)
            #expect(try store.summaries(of: .all, after: "Old-empty", limit: 10) == [expected[1]])
            #expect(
                try store.summaries(of: ListSelection(prefixes: [], names: ["old-tree"]), after: nil, limit: 10) == [
                    expected[1]
                ])
            // A second store opening the same database (another instance) changes nothing more.
            try Self.store(database).close()

            let service = try await ListingService(store: store)
            defer { service.stop() }
            #expect(try service.service.registry.loadedVersion(of: "old-tree")?.itemCount == 2)
            #expect(try service.walk() == expected)
            let insert = try service.server.request(
                "POST", "/v1/lists/old-tree/ops",
                headers: ListingService.writer + [("Content-Type", "application/json")],
                body: Array(#"{"ops":[{"op":"insertItems","section":"a","items":[{"id":"2","type":"t"}]}]}"#.utf8))
            #expect(insert.status == 200)
            #expect(try service.walk().last == ListSummary(name: "old-tree", version: 8, sections: 1, items: 3))
            // The write stored the list's sizes with its version; the list untouched since has none.
            let sizes = try database.rows(
                "SELECT name, sections::text, items::text, sized_version::text FROM quire_list ORDER BY name COLLATE \"C\""
            )
            #expect(sizes == [["Old-empty", nil, nil, nil], ["old-tree", "1", "3", "8"]])
        }
    }
#endif
