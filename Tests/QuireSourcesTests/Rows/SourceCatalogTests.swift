import QuireCore
import QuireSources
import Testing

@Suite("A source checked against its database's catalog")
struct SourceCatalogTests {
    static let source = try! SourceConfiguration(entry: entry(), index: 0, environment: [:])

    static let columns: [SourceRelation.Column] = [
        .init(name: "id", type: .int8), .init(name: "owner", type: .text), .init(name: "folder", type: .text),
        .init(name: "sent_at", type: .timestamptz), .init(name: "sender", type: .text),
        .init(name: "subject", type: .text), .init(name: "unread", type: .bool), .init(name: "body", type: .text),
    ]

    static func catalog(
        walLevel: String = "logical", replication: Bool = true, columns: [SourceRelation.Column] = columns,
        primaryKey: [String] = ["id"], canSelect: Bool = true, table: Bool = true
    ) -> SourceCatalog {
        SourceCatalog(
            walLevel: walLevel, role: "quire", roleCanReplicate: replication,
            table: table ? .init(columns: columns, primaryKey: primaryKey, canSelect: canSelect) : nil)
    }

    @Test("a database that has everything refuses nothing")
    func accepted() {
        #expect(Self.source.refusals(in: Self.catalog()).isEmpty)
    }

    @Test("every refusal names the source and the key")
    func refusals() {
        let cases: [(SourceCatalog, [String])] = [
            (
                Self.catalog(walLevel: "replica"),
                [
                    "sources[inbox].url: the database's wal_level is replica, not logical: set wal_level = logical in "
                        + "postgresql.conf and restart PostgreSQL"
                ]
            ),
            (
                Self.catalog(replication: false),
                [#"sources[inbox].url: the role quire has no REPLICATION attribute: ALTER ROLE "quire" REPLICATION"#]
            ),
            (
                Self.catalog(table: false),
                [
                    "sources[inbox].table: no such table public.messages in the database of "
                        + "postgres://quire:<redacted>@127.0.0.1:5432/app"
                ]
            ),
            (
                Self.catalog(canSelect: false),
                [
                    #"sources[inbox].table: the role quire may not SELECT from public.messages: GRANT SELECT ON "public"."messages" TO "quire""#
                ]
            ),
            (
                Self.catalog(primaryKey: []),
                ["sources[inbox].table: public.messages has no primary key, which a row's item id is made of"]
            ),
            (
                Self.catalog(columns: Self.columns.filter { $0.name != "sent_at" }),
                [
                    "sources[inbox].order: no column sent_at in public.messages",
                    "sources[inbox].data: no column sent_at in public.messages",
                ]
            ),
            (
                Self.catalog(columns: Self.columns.filter { $0.name != "owner" && $0.name != "folder" }),
                [
                    "sources[inbox].list: no column owner in public.messages",
                    "sources[inbox].section: no column folder in public.messages",
                ]
            ),
            (
                Self.catalog(
                    columns: Self.columns.map { $0.name == "sent_at" ? .init(name: "sent_at", type: .jsonb) : $0 }),
                [
                    "sources[inbox].order: sent_at is jsonb, which Quire cannot order as PostgreSQL does: order by a "
                        + "number, text, boolean, date, time or timestamp column"
                ]
            ),
        ]
        for (catalog, expected) in cases {
            #expect(Self.source.refusals(in: catalog).map(\.description) == expected)
        }
    }

    @Test("every problem at once, and a section column that cannot be ordered")
    func together() {
        let columns = Self.columns.map {
            $0.name == "folder" ? .init(name: "folder", type: PostgresType(oid: 16_384)) : $0
        }
        let refusals = Self.source.refusals(
            in: Self.catalog(walLevel: "minimal", replication: false, columns: columns, primaryKey: []))
        #expect(refusals.map(\.key) == ["url", "url", "table", "section"])
        #expect(refusals.last?.reason.hasPrefix("folder is type 16384, which Quire cannot order") == true)
    }

    @Test("a type column, and order columns of every orderable type, pass")
    func orderableTypes() throws {
        let types: [PostgresType] = [
            .int2, .int4, .int8, .float4, .float8, .numeric, .bool, .text, .varchar, .bpchar, .name, .uuid, .bytea,
            .date, .time, .timetz, .timestamp, .timestamptz,
        ]
        for type in types {
            #expect(type.isOrderable, "\(type)")
        }
        for type: PostgresType in [.json, .jsonb, .interval, PostgresType(oid: 1007), PostgresType(oid: 99_999)] {
            #expect(!type.isOrderable, "\(type)")
        }
        #expect(PostgresType(oid: 1007).description == "integer[]")
        let typed = try SourceConfiguration(entry: entry(["type": "{kind}"]), index: 0, environment: [:])
        #expect(
            typed.refusals(in: Self.catalog()).map(\.description) == [
                "sources[inbox].type: no column kind in public.messages"
            ])
    }
}
