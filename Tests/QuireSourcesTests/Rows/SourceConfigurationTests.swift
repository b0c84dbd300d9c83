import QuireCore
import QuireSources
import Testing

/// An entry of `sources:` as the file gives it (strings, lists of strings), the example of the contract's §2b with
/// `changes` applied (`nil` removes a key).
func entry(_ changes: [String: JSONValue?] = [:]) -> JSONValue {
    var members: [String: JSONValue] = [
        "name": "inbox",
        "url": "postgres://quire:secret@127.0.0.1:5432/app",
        "table": "public.messages",
        "list": "inbox-{owner}",
        "section": "folder",
        "sectionOrder": "asc",
        "order": ["sent_at desc", "id"],
        "type": "message",
        "data": ["sender", "subject", "unread", "sent_at"],
    ]
    for (key, value) in changes { members[key] = value }
    return .object(members)
}

/// The message the entry is refused with, or `nil` when it is accepted.
func refusal(_ entry: JSONValue, environment: [String: String] = [:]) -> String? {
    do {
        _ = try SourceConfiguration(entry: entry, index: 0, environment: environment)
        return nil
    } catch {
        return error.description
    }
}

@Suite("A source's configuration, read and refused")
struct SourceConfigurationTests {
    @Test("the contract's example reads as every key says")
    func example() throws {
        let source = try SourceConfiguration(entry: entry(), index: 0, environment: [:])
        #expect(source.name == "inbox")
        #expect(source.publication == "quire_inbox" && source.slot == "quire_inbox")
        #expect(source.url == "postgres://quire:secret@127.0.0.1:5432/app")
        #expect(source.table == TableName(schema: "public", name: "messages"))
        #expect(source.list == ListTemplate(prefix: "inbox-", column: "owner"))
        #expect(source.section == "folder" && source.sectionOrder == .ascending)
        #expect(source.order == [OrderTerm(column: "sent_at", direction: .descending), OrderTerm(column: "id")])
        #expect(source.type == .constant("message"))
        #expect(source.data == ["sender", "subject", "unread", "sent_at"])
        #expect(source.columns.all == ["owner", "folder", "sent_at", "id", "sender", "subject", "unread"])
        #expect(source.columns.published(primaryKey: ["id", "tenant"]).last == "tenant")
        #expect(
            source.description
                == "inbox: public.messages → inbox-{owner} (postgres://quire:<redacted>@127.0.0.1:5432/app)")
    }

    @Test("defaults: sections ascending, no order but the key, no data")
    func defaults() throws {
        let source = try SourceConfiguration(
            entry: entry(["sectionOrder": nil, "order": nil, "data": nil]), index: 0, environment: [:])
        #expect(source.sectionOrder == .ascending && source.order.isEmpty && source.data.isEmpty)
        let desc = try SourceConfiguration(
            entry: entry(["sectionOrder": "DESC", "order": "sent_at DESC", "data": "subject"]), index: 0,
            environment: [:])
        #expect(desc.sectionOrder == .descending)
        #expect(desc.order == [OrderTerm(column: "sent_at", direction: .descending)])
        #expect(desc.data == ["subject"])
    }

    @Test("the URL from QUIRE_SOURCES_<NAME>_URL wins over the file's; without either, refused")
    func urlFromEnvironment() throws {
        let environment = ["QUIRE_SOURCES_INBOX_URL": "postgresql://env@db/app"]
        #expect(
            try SourceConfiguration(entry: entry(), index: 0, environment: environment).url == "postgresql://env@db/app"
        )
        #expect(
            try SourceConfiguration(entry: entry(["url": nil]), index: 0, environment: environment).url
                == "postgresql://env@db/app")
        #expect(SourceConfiguration.urlVariable(for: "my_inbox2") == "QUIRE_SOURCES_MY_INBOX2_URL")
        #expect(
            refusal(entry(["url": nil]))
                == "sources[inbox].url: not set: give it here (postgres://user:password@host:port/database) or in "
                + "QUIRE_SOURCES_INBOX_URL")
        let keyValue = refusal(entry(["url": "host=db password=hunter2"]))
        #expect(keyValue?.hasPrefix("sources[inbox].url: not a postgres:// or postgresql:// URL") == true)
        #expect(keyValue?.contains("hunter2") == false)
    }

    @Test("a name is [a-z0-9_]{1,32}; without one, the entry is named by its place")
    func names() {
        #expect(refusal(entry(["name": "my_inbox_2"])) == nil)
        #expect(refusal(entry(["name": .string(String(repeating: "a", count: 32))])) == nil)
        for bad: JSONValue in ["Inbox", "in-box", "", .string(String(repeating: "a", count: 33)), "é"] {
            let message = refusal(entry(["name": bad]))
            #expect(message?.hasPrefix("sources[#1].name: ") == true, "\(bad): \(message ?? "accepted")")
        }
        #expect(
            refusal(entry(["name": "Inbox"]))
                == "sources[#1].name: \"Inbox\" is not [a-z0-9_]{1,32} (it names the publication and the slot, "
                + "quire_<name>)")
        #expect(refusal(entry(["name": nil])) == "sources[#1].name: missing: every source needs one (name: inbox)")
        #expect(refusal("inbox") == "sources[#1]: expected a mapping of keys (name, table, …), found a string")
    }

    @Test("an unknown key is refused, naming it and the keys there are")
    func unknownKey() {
        #expect(
            refusal(entry(["colour": "red"]))
                == "sources[inbox].colour: unknown key; a source's keys are name, url, table, list, section, "
                + "sectionOrder, order, type, data")
    }

    @Test("every required key, missing, is named", arguments: ["table", "list", "section", "type"])
    func required(key: String) {
        #expect(refusal(entry([key: nil]))?.hasPrefix("sources[inbox].\(key): missing: every source needs one") == true)
        #expect(refusal(entry([key: ["a"]])) == "sources[inbox].\(key): expected a string, found a list")
    }

    @Test("tables: schema.table, public by default, double quotes for any other name")
    func tables() throws {
        func table(_ text: String) throws -> TableName {
            try SourceConfiguration(entry: entry(["table": .string(text)]), index: 0, environment: [:]).table
        }
        #expect(try table("messages") == TableName(schema: "public", name: "messages"))
        #expect(try table("app.Messages") == TableName(schema: "app", name: "Messages"))
        #expect(try table(#""my schema"."a.b""#) == TableName(schema: "my schema", name: "a.b"))
        #expect(try table(#""say ""hi""""#) == TableName(schema: "public", name: #"say "hi""#))
        #expect(try table(#"app."t 1""#).description == #"app."t 1""#)
        #expect(TableName(schema: "my schema", name: "a.b").description == #""my schema"."a.b""#)
        #expect(TableName(name: #"x"y"#).sql == #""public"."x""y""#)
        for written in [#""my schema"."a.b""#, "app.Messages", #"public."x""y""#] {
            #expect(try table(try table(written).description) == (try table(written)))
        }
        for bad in ["a.b.c", ".x", "x.", #""unterminated"#, "a b", #""""#, "a.\"\""] {
            let message = refusal(entry(["table": .string(bad)]))
            #expect(message?.hasPrefix("sources[inbox].table: ") == true, "\(bad): \(message ?? "accepted")")
        }
        #expect(
            refusal(entry(["table": "a.b.c"]))
                == "sources[inbox].table: \"a.b.c\" is not \"schema.table\" or \"table\" (a name with a space, a dot or "
                + "a quote in double quotes)")
        let long = String(repeating: "t", count: 64)
        #expect(
            refusal(entry(["table": .string(long)]))
                == "sources[inbox].table: \"\(long)\" is longer than 63 bytes, which PostgreSQL cuts its names to")
    }

    @Test("a list is a constant name, or a prefix and one {column} at its end")
    func lists() throws {
        func list(_ text: String) throws -> ListTemplate {
            try SourceConfiguration(entry: entry(["list": .string(text)]), index: 0, environment: [:]).list
        }
        #expect(try list("inbox") == ListTemplate(prefix: "inbox"))
        #expect(try list("{owner}") == ListTemplate(prefix: "", column: "owner"))
        #expect(try list("a.b_c-{owner id}") == ListTemplate(prefix: "a.b_c-", column: "owner id"))
        let refusals: [String: String] = [
            "inbox-{owner}-x": "\"inbox-{owner}-x\" has text after {owner}: a list is a constant name, or a literal "
                + "prefix and one {column} at its end",
            "in box": "\"in box\" is not a list name ([A-Za-z0-9._-]{1,128})",
            "inbox-{owner": "\"inbox-{owner\" opens { without closing it: a list is a constant name, or a literal "
                + "prefix and one {column} at its end",
            "inbox-{}": "the column name \"\" is empty",
            "a/{x}": "the prefix \"a/\" is not the start of a list name ([A-Za-z0-9._-]{1,128})",
            "{a}{b}": "\"{a}{b}\" has text after {a}: a list is a constant name, or a literal prefix and one {column} "
                + "at its end",
        ]
        for (written, reason) in refusals {
            #expect(refusal(entry(["list": .string(written)])) == "sources[inbox].list: \(reason)", "\(written)")
        }
        #expect(refusal(entry(["list": .string(String(repeating: "l", count: 129))])) != nil)
        #expect(refusal(entry(["list": .string(String(repeating: "l", count: 128) + "{x}")])) != nil)
    }

    @Test("order terms are \"column [asc|desc]\", a name with a space in double quotes")
    func order() throws {
        func order(_ terms: [String]) throws -> [OrderTerm] {
            try SourceConfiguration(
                entry: entry(["order": .array(terms.map(JSONValue.string))]), index: 0, environment: [:]
            ).order
        }
        #expect(
            try order(["sent_at desc", "id ASC", " x  "]) == [
                OrderTerm(column: "sent_at", direction: .descending), OrderTerm(column: "id"), OrderTerm(column: "x"),
            ])
        #expect(try order([#""sent at" desc"#]) == [OrderTerm(column: "sent at", direction: .descending)])
        #expect(try order(["desc"]) == [OrderTerm(column: "desc")])
        #expect(OrderTerm(column: "sent at", direction: .descending).description == #""sent at" desc"#)
        #expect(
            refusal(entry(["order": ["sent_at sideways"]]))
                == #"sources[inbox].order: "sent_at sideways" is not "column [asc|desc]""#)
        for bad in ["", "sent_at desc asc", #""sent at"desc"#, #""open"#] {
            #expect(
                refusal(entry(["order": [.string(bad)]]))
                    == #"sources[inbox].order: "\#(bad)" is not "column [asc|desc]""#)
        }
        #expect(refusal(entry(["order": ["a", "a desc"]])) == "sources[inbox].order: a is named twice")
        #expect(
            refusal(entry(["order": [["a"]]])) == "sources[inbox].order: expected a list of strings, found a list in it"
        )
        #expect(
            refusal(entry(["order": ["k": "v"]])) == "sources[inbox].order: expected a list of strings, found a mapping"
        )
    }

    @Test("a type is a constant or \"{column}\"")
    func types() throws {
        func type(_ text: String) throws -> TypeTemplate {
            try SourceConfiguration(entry: entry(["type": .string(text)]), index: 0, environment: [:]).type
        }
        #expect(try type("message") == .constant("message"))
        #expect(try type("{kind}") == .column("kind"))
        #expect(try type("{kind}").description == "{kind}")
        #expect(
            refusal(entry(["type": "msg-{kind}"]))
                == "sources[inbox].type: \"msg-{kind}\" is neither a constant type nor \"{column}\"")
        #expect(refusal(entry(["type": "{a}{b}"])) != nil)
        #expect(
            refusal(entry(["type": .string(String(repeating: "t", count: 129))]))
                == "sources[inbox].type: a type is 1 to 128 bytes (limits.maxTypeLength)")
        let limits = ListLimits(maxTypeLength: 4)
        #expect(throws: SourceConfigurationError.self) {
            try SourceConfiguration(entry: entry(["type": "message"]), index: 0, environment: [:], limits: limits)
        }
    }

    @Test("data columns by name, each once; sectionOrder asc or desc")
    func dataAndSectionOrder() {
        #expect(refusal(entry(["data": ["a", "b", "a"]])) == "sources[inbox].data: a is named twice")
        #expect(refusal(entry(["data": [""]])) == "sources[inbox].data: the column name \"\" is empty")
        #expect(refusal(entry(["data": []])) == nil)
        #expect(refusal(entry(["sectionOrder": "up"])) == "sources[inbox].sectionOrder: \"up\" is not asc or desc")
        #expect(refusal(entry(["section": .string(String(repeating: "c", count: 64))]))?.contains("63 bytes") == true)
    }

    @Test("sources: a list; names distinct; no two sources make one list")
    func all() throws {
        #expect(try SourceConfiguration.all(in: nil, environment: [:]).isEmpty)
        #expect(try SourceConfiguration.all(in: .null, environment: [:]).isEmpty)
        #expect(try SourceConfiguration.all(in: [], environment: [:]).isEmpty)
        let two = try SourceConfiguration.all(
            in: [entry(), entry(["name": "sent", "list": "sent-{owner}"])], environment: [:])
        #expect(two.map(\.name) == ["inbox", "sent"])
        func message(_ value: JSONValue) -> String? {
            do {
                _ = try SourceConfiguration.all(in: value, environment: [:])
                return nil
            } catch {
                return error.description
            }
        }
        #expect(message(entry()) == "sources: expected a list of sources (- name: …), found a mapping")
        #expect(message([entry(), entry(["list": "other"])]) == "sources[inbox].name: two sources are named inbox")
        #expect(
            message([entry(), entry(["name": "b", "list": "inbox-a{x}"])])
                == "sources[b].list: \"inbox-a{x}\" can make the same list names as sources[inbox].list "
                + "\"inbox-{owner}\": a list is kept from one source")
        #expect(message([entry(["list": "x"]), entry(["name": "b", "list": "x"])]) != nil)
        #expect(message([entry(["list": "inbox-1"]), entry(["name": "b"])]) != nil)
        #expect(message([entry(["list": "inbox"]), entry(["name": "b"])]) == nil)
        #expect(message([entry(), entry(["name": "c", "table": "a.b.c"])]) != nil)
        #expect(message([entry(), "x"]) == "sources[#2]: expected a mapping of keys (name, table, …), found a string")
    }

    @Test("the templates' names")
    func templates() {
        let template = ListTemplate(prefix: "inbox-", column: "owner")
        #expect(template.canMake("inbox-ada") && !template.canMake("inbox-") && !template.canMake("sent-ada"))
        #expect(ListTemplate(prefix: "inbox").canMake("inbox") && !ListTemplate(prefix: "inbox").canMake("inbox2"))
        #expect(template.overlaps(ListTemplate(prefix: "inbox-x")))
        #expect(!template.overlaps(ListTemplate(prefix: "inbox-")))
        #expect(ListTemplate(prefix: "", column: "a").overlaps(ListTemplate(prefix: "z", column: "b")))
    }
}

@Suite("Passwords never printed")
struct RedactionTests {
    @Test("the password of a URL, in its user information or its query, is redacted, and nothing else")
    func urls() {
        let cases: [(String, String)] = [
            ("postgres://u:p@h:1/d", "postgres://u:<redacted>@h:1/d"),
            ("postgres://u:p:q@h/d?x=1", "postgres://u:<redacted>@h/d?x=1"),
            ("postgres://u@h/d", "postgres://u@h/d"),
            (
                "postgres://h/d?user=u&password=p&sslmode=require",
                "postgres://h/d?user=u&password=<redacted>&sslmode=require"
            ),
            ("postgresql://u:p@h/d?PASSWORD=x", "postgresql://u:<redacted>@h/d?PASSWORD=<redacted>"),
            ("postgres://h/d?user=u:p@x", "postgres://h/d?user=u:p@x"),
            ("", ""),
        ]
        for (url, redacted) in cases {
            #expect(SourceURL.redactingPassword(of: url) == redacted, "\(url)")
        }
    }

    @Test("no message about a source holds its password")
    func messages() throws {
        let source = try SourceConfiguration(
            entry: entry(["url": "postgres://quire:hunter2@db/app?password=hunter3"]), index: 0, environment: [:])
        let catalog = SourceCatalog(walLevel: "replica", role: "quire", roleCanReplicate: false, table: nil)
        let texts =
            [source.description, source.redactedURL, "\(source)"] + source.refusals(in: catalog).map(\.description)
        for text in texts {
            #expect(!text.contains("hunter2") && !text.contains("hunter3"), "\(text)")
        }
        #expect(source.refusals(in: catalog).last?.description.contains("postgres://quire:<redacted>@db/app") == true)
    }
}
