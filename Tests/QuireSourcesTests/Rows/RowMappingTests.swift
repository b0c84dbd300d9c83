import QuireCore
import QuireSources
import Testing

/// The contract's example source over a `messages` table with one column no source names (`body`).
struct Inbox {
    static let columns: [SourceRelation.Column] = [
        .init(name: "id", type: .int8), .init(name: "owner", type: .text), .init(name: "folder", type: .text),
        .init(name: "sent_at", type: .timestamptz), .init(name: "sender", type: .text),
        .init(name: "subject", type: .text), .init(name: "unread", type: .bool), .init(name: "body", type: .text),
        .init(name: "kind", type: .text),
    ]

    static func mapping(
        _ changes: [String: JSONValue?] = [:], primaryKey: [String] = ["id"], limits: ListLimits = ListLimits()
    ) throws -> RowMapping {
        let source = try SourceConfiguration(entry: entry(changes), index: 0, environment: [:])
        return try RowMapping(
            source: source, relation: SourceRelation(columns: columns, primaryKey: primaryKey), limits: limits)
    }

    /// A row by column name; the columns not given are NULL.
    static func row(_ values: [String: String?]) -> [String?] {
        columns.map { values[$0.name] ?? nil }
    }

    static let ada = row([
        "id": "7", "owner": "ada", "folder": "work", "sent_at": "2026-12-01 10:00:00+00", "sender": "Grace",
        "subject": "Hi", "unread": "t", "body": "secret body", "kind": "memo",
    ])
}

@Suite("A row in Quire's terms")
struct RowMappingTests {
    @Test("list, item (id, type, exactly the data columns), section and its header")
    func terms() throws {
        let terms = try Inbox.mapping().terms(of: Inbox.ada).get()
        #expect(terms.list == "inbox-ada")
        #expect(terms.item.id == "7" && terms.item.type == "message")
        #expect(
            terms.item.data.description
                == #"{"sender":"Grace","sent_at":"2026-12-01 10:00:00+00","subject":"Hi","unread":true}"#)
        #expect(!terms.item.json.description.contains("secret body"), "a column the source does not name stays home")
        #expect(terms.section.id == "work")
        #expect(terms.section.header.description == #"{"data":{"folder":"work"},"type":"section"}"#)
        #expect(
            terms.section.json(items: [terms.item]).description
                == #"{"footer":null,"header":{"data":{"folder":"work"},"type":"section"},"id":"work","items":[{"data":"#
                + #"{"sender":"Grace","sent_at":"2026-12-01 10:00:00+00","subject":"Hi","unread":true},"id":"7","type":"message"}]}"#
        )
        // The item and the section are what an op carries: Quire's own decoder takes them.
        let op: JSONValue = ["op": "insertSections", "sections": [terms.section.json(items: [terms.item])]]
        _ = try ListOp.decode(op)
    }

    @Test("a constant list, a type from a column, a numeric section value in the header, a NULL data value")
    func variants() throws {
        let columns = Inbox.columns + [.init(name: "rank", type: .numeric)]
        let source = try SourceConfiguration(
            entry: entry(["list": "all", "type": "{kind}", "section": "rank", "data": ["subject", "rank"]]), index: 0,
            environment: [:])
        let mapping = try RowMapping(source: source, relation: SourceRelation(columns: columns, primaryKey: ["id"]))
        var row = Inbox.ada + ["2.50"]
        row[5] = nil
        let terms = try mapping.terms(of: row).get()
        #expect(terms.list == "all" && terms.item.type == "memo" && terms.section.id == "2.50")
        #expect(terms.item.data.description == #"{"rank":2.50,"subject":null}"#)
        #expect(terms.section.header.description == #"{"data":{"rank":2.50},"type":"section"}"#)
    }

    @Test("a composite key's parts joined by ':', escaped where they could run together")
    func compositeIDs() throws {
        let mapping = try Inbox.mapping(primaryKey: ["owner", "sent_at", "id"])
        #expect(try mapping.itemID(of: Inbox.ada).get() == "ada:2026-12-01 10%3A00%3A00+00:7")
        let last = try Inbox.mapping(primaryKey: ["id", "sent_at"])
        #expect(try last.itemID(of: Inbox.ada).get() == "7:2026-12-01 10:00:00+00", "the last part as it is")
        let percent = Inbox.row(["id": "a:b", "owner": "100%"])
        #expect(try Inbox.mapping(primaryKey: ["owner", "id"]).itemID(of: percent).get() == "100%25:a:b")
        let one = try Inbox.mapping(primaryKey: ["sent_at"])
        #expect(try one.itemID(of: Inbox.ada).get() == "2026-12-01 10:00:00+00", "a one-column key as it is")
        // A delete's key tuple: NULL outside the key.
        #expect(try mapping.itemID(of: Inbox.row(["owner": "ada", "sent_at": "x", "id": "7"])).get() == "ada:x:7")
        let left = Inbox.row(["owner": "a:b", "id": "c"])
        let right = Inbox.row(["owner": "a", "id": "b:c"])
        let two = try Inbox.mapping(primaryKey: ["owner", "id"])
        #expect(try two.itemID(of: left).get() != (try two.itemID(of: right).get()))
    }

    @Test("rows that break a list's limits are left out, with the reason")
    func skipped() throws {
        func reason(
            _ values: [String: String?], _ changes: [String: JSONValue?] = [:], limits: ListLimits = ListLimits()
        ) throws -> SkippedRow? {
            var row = Inbox.ada
            for (name, value) in values { row[Inbox.columns.firstIndex { $0.name == name }!] = value }
            guard case .failure(let skipped) = try Inbox.mapping(changes, limits: limits).terms(of: row) else {
                return nil
            }
            return skipped
        }
        #expect(try reason(["owner": nil])?.reason == .listColumnNull(column: "owner"))
        #expect(try reason(["owner": "a b"])?.reason == .invalidListName("inbox-a b"))
        #expect(try reason(["owner": .some(String(repeating: "o", count: 122))])?.reason == nil)
        #expect(try reason(["owner": .some(String(repeating: "o", count: 123))])?.code == "list_name")
        #expect(try reason(["id": nil])?.reason == .keyColumnNull(column: "id"))
        #expect(try reason(["id": ""])?.reason == .invalidItemID(bytes: 0))
        #expect(try reason(["id": "12345"], limits: ListLimits(maxIDLength: 4))?.reason == .invalidItemID(bytes: 5))
        #expect(try reason(["folder": nil])?.reason == .sectionColumnNull(column: "folder"))
        #expect(try reason(["folder": ""])?.reason == .invalidSectionID(bytes: 0))
        #expect(try reason(["kind": nil], ["type": "{kind}"])?.reason == .typeColumnNull(column: "kind"))
        #expect(try reason(["kind": ""], ["type": "{kind}"])?.reason == .invalidType(bytes: 0))
        let big = String(repeating: "x", count: 100)
        #expect(try reason(["subject": .some(big)], limits: ListLimits(maxDataBytes: 100))?.code == "data")
        #expect(
            try reason(["folder": .some(big)], ["data": []], limits: ListLimits(maxDataBytes: 100))?.reason
                == .headerTooLarge(bytes: 113))
        let skipped = try #require(try reason(["owner": "a b"]))
        #expect(
            skipped.description
                == #"sources[inbox]: row "7" left out: "inbox-a b" is not a list name ([A-Za-z0-9._-]{1,128})"#)
        #expect(
            try reason(["id": nil])?.description == "sources[inbox]: a row left out: its primary key column id is NULL")
    }

    @Test("a row's place is recorded and read back: escapes, NULLs, a record that no longer places a row")
    func recordedPlaces() throws {
        let mapping = try Inbox.mapping()
        func placed(_ values: [String: String?]) throws -> RowPlace {
            let row = Inbox.row(values)
            return mapping.place(of: row, terms: try mapping.terms(of: row).get())
        }
        let ada = try placed([
            "id": "7", "owner": "ada", "folder": "work", "sent_at": "2026-12-01 10:00:00+00", "subject": "Hi",
        ])
        #expect(mapping.place(recorded: ada.recorded) == ada)
        #expect(!ada.recorded.contains("Hi"), "only the placing columns are recorded")
        // A value with a quote, a backslash and a line break is escaped: read back through the JSON parser.
        let escaped = try placed(["id": "8", "owner": "ada", "folder": "a \"b\" \\ c\nd", "sent_at": nil])
        #expect(mapping.place(recorded: escaped.recorded) == escaped)
        #expect(escaped.value(of: "sent_at") == .some(nil) && escaped.value(of: "folder") == .some("a \"b\" \\ c\nd"))
        // The same record written with spaces and its members in another order places the same row.
        let spaced = #"{ "sent_at": "2026-12-01 10:00:00+00", "id": "7", "folder": "work", "owner": "ada" }"#
        let read = try #require(mapping.place(recorded: spaced))
        #expect(read.list == ada.list && read.section == ada.section && read.key == ada.key)
        // A record without a column the mapping now places by, or whose list name no longer is one, places nothing.
        #expect(mapping.place(recorded: #"{"id":"7","owner":"ada","folder":"work"}"#) == nil)
        #expect(mapping.place(recorded: #"{"id":"7","owner":"a/b","folder":"work","sent_at":null}"#) == nil)
        for broken in ["", "{", #"{"id":"7""#, #"{"id":7}"#, "[]", #"{"id":"7"} x"#] {
            #expect(mapping.place(recorded: broken) == nil, "\(broken)")
        }
    }

    @Test("a relation without a column the source names, or without a primary key, stops the source")
    func missingColumns() throws {
        let source = try SourceConfiguration(entry: entry(), index: 0, environment: [:])
        func message(_ columns: [SourceRelation.Column], key: [String] = ["id"]) -> String? {
            do {
                _ = try RowMapping(source: source, relation: SourceRelation(columns: columns, primaryKey: key))
                return nil
            } catch {
                return error.description
            }
        }
        #expect(message(Inbox.columns) == nil)
        #expect(
            message(Inbox.columns.filter { $0.name != "subject" })
                == "sources[inbox].data: no column subject in public.messages")
        #expect(
            message(Inbox.columns.filter { $0.name != "sent_at" })
                == "sources[inbox].order: no column sent_at in public.messages")
        #expect(message(Inbox.columns, key: []) == "sources[inbox].table: public.messages has no primary key")
        #expect(message(Inbox.columns, key: ["nope"]) == "sources[inbox].table: no column nope in public.messages")
    }
}
