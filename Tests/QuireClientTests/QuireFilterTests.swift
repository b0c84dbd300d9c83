import Foundation
import HTTPTypes
import OpenAPIRuntime
import QuireClient
import Testing

/// The filter builder writes the grammar of openapi.yaml, and a session sends it as its `filter` member.
@Suite("Filter builder")
struct QuireFilterTests {
    /// `filter` as JSON, and `expected` parsed: equal as JSON values (numbers by value, members in any order).
    func expectJSON(_ filter: QuireFilter, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let written = try ClientJSON(parsing: Data(filter.json.utf8))
        #expect(written == (try ClientJSON(parsing: Data(expected.utf8))), sourceLocation: sourceLocation)
        let encoded = try ClientJSON(parsing: try JSONEncoder().encode(filter))
        #expect(encoded == written, "Encodable and json agree", sourceLocation: sourceLocation)
    }

    @Test("every operator makes a term of one field and that operator")
    func terms() throws {
        let field = QuireFilter.field("data.from")
        try expectJSON(field.eq("Ada"), #"{"field":"data.from","eq":"Ada"}"#)
        try expectJSON(.field("data.unread").eq(true), #"{"field":"data.unread","eq":true}"#)
        try expectJSON(.field("data.priority").eq(2), #"{"field":"data.priority","eq":2}"#)
        try expectJSON(.field("data.score").ne(1.5), #"{"field":"data.score","ne":1.5}"#)
        try expectJSON(field.in(["bot", "system"]), #"{"field":"data.from","in":["bot","system"]}"#)
        try expectJSON(.field("data.n").in([1, true, "x"]), #"{"field":"data.n","in":[1,true,"x"]}"#)
        try expectJSON(.field("data.priority").lt(2), #"{"field":"data.priority","lt":2}"#)
        try expectJSON(.field("data.priority").lte(2.5), #"{"field":"data.priority","lte":2.5}"#)
        try expectJSON(.field("data.day").gt("2024-06-01"), #"{"field":"data.day","gt":"2024-06-01"}"#)
        try expectJSON(.field("data.priority").gte(0), #"{"field":"data.priority","gte":0}"#)
        try expectJSON(.field("data.text").contains("lunch"), #"{"field":"data.text","contains":"lunch"}"#)
        try expectJSON(.field("data.text").exists(), #"{"field":"data.text","exists":true}"#)
        try expectJSON(.field("data.text").exists(false), #"{"field":"data.text","exists":false}"#)
        try expectJSON(.field("id").eq("m-1"), #"{"field":"id","eq":"m-1"}"#)
        try expectJSON(.data("author", "name").eq("Ada"), #"{"field":"data.author.name","eq":"Ada"}"#)
        try expectJSON(.field("type").eq(.string("message")), #"{"field":"type","eq":"message"}"#)
    }

    @Test("all, any and not combine filters, to the depth the contract allows")
    func combinators() throws {
        let unread = QuireFilter.field("data.unread").eq(true)
        let bots = QuireFilter.field("data.from").in(["bot", "system"])
        try expectJSON(
            .all([
                .field("type").eq("message"), unread, .not(bots),
                .any([.field("data.subject").contains("lunch"), .field("data.priority").gte(2)]),
            ]),
            #"""
            {"all":[{"field":"type","eq":"message"},{"field":"data.unread","eq":true},
                    {"not":{"field":"data.from","in":["bot","system"]}},
                    {"any":[{"field":"data.subject","contains":"lunch"},{"field":"data.priority","gte":2}]}]}
            """#)
        try expectJSON(
            .not(.all([.any([.not(unread)])])),
            #"{"not":{"all":[{"any":[{"not":{"field":"data.unread","eq":true}}]}]}}"#)
    }

    @Test("&&, || and ! make all, any and not, flattening a chain of the same operator")
    func operators() throws {
        let a = QuireFilter.field("data.a").eq(1)
        let b = QuireFilter.field("data.b").eq(2)
        let c = QuireFilter.field("data.c").eq(3)
        #expect((a && b && c) == .all([a, b, c]))
        #expect((a || b || c) == .any([a, b, c]))
        #expect(((a && b) || c) == .any([.all([a, b]), c]))
        #expect(!a == .not(a))
        #expect((!(a || b) && c) == .all([.not(.any([a, b])), c]))
        try expectJSON(a && !b, #"{"all":[{"field":"data.a","eq":1},{"not":{"field":"data.b","eq":2}}]}"#)
    }

    @Test("a value written as text is sent as it is: quotes, backslashes and non-ASCII text")
    func escaping() throws {
        let text = #"Ünïcödé "quoted" \ slash/ 🎉"#
        let filter = QuireFilter.field("data.text").contains(text)
        guard case .object(let members) = try ClientJSON(parsing: Data(filter.json.utf8)) else {
            Issue.record("not an object: \(filter.json)")
            return
        }
        #expect(members["contains"] == .string(text))
        #expect(filter.description == filter.json)
    }

    @Test("a session sends its filter as the session's filter member, and a refusal reaches open() typed")
    func sessionRequest() async throws {
        let transport = RecordingTransport()
        let client = QuireClient(
            baseURL: URL(string: "http://quire.invalid")!, transport: transport, streamsResponses: false)
        let filter = QuireFilter.field("data.unread").eq(true) && .field("data.from").ne("bot")
        let session = client.session(list: "inbox", options: .init(limit: 20, filter: filter))
        #expect(session.options.filter == filter)
        do {
            try await session.open()
            Issue.record("open() should throw: the transport answers 400 invalid-filter")
        } catch let error as QuireClientError {
            #expect(error.status == 400)
            #expect(error.problem == "invalid-filter")
            #expect(error.description.contains("all[1]: unknown"))
        }
        let sent = try #require(transport.requests.value.first)
        #expect(sent.method == "POST" && sent.path == "/v1/lists/inbox/sessions")
        guard case .object(let body) = try ClientJSON(parsing: sent.body) else {
            Issue.record("the body is not an object")
            return
        }
        #expect(body["limit"] == .number(20))
        #expect(body["filter"] == (try ClientJSON(parsing: Data(filter.json.utf8))))
        await session.close()
    }

    @Test("a session without a filter sends no filter member")
    func noFilter() async throws {
        let transport = RecordingTransport()
        let client = QuireClient(
            baseURL: URL(string: "http://quire.invalid")!, transport: transport, streamsResponses: false)
        let session = client.session(list: "inbox")
        await #expect(throws: QuireClientError.self) { try await session.open() }
        let sent = try #require(transport.requests.value.first)
        guard case .object(let body) = try ClientJSON(parsing: sent.body) else {
            Issue.record("the body is not an object")
            return
        }
        #expect(body["filter"] == nil)
        await session.close()
    }
}

/// A transport that keeps every request and answers each with `400 invalid-filter`.
final class RecordingTransport: ClientTransport {
    struct Sent: Sendable {
        let method: String
        let path: String
        let body: Data
    }

    let requests = Recorded()

    /// The requests, behind a lock: the transport is called from the session's tasks.
    final class Recorded: @unchecked Sendable {
        // @unchecked Sendable is safe: `stored` is only read and written while `lock` is held.
        private let lock = NSLock()
        private var stored: [Sent] = []
        var value: [Sent] { lock.withLock { stored } }
        func append(_ sent: Sent) { lock.withLock { stored.append(sent) } }
    }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws
        -> (HTTPResponse, HTTPBody?)
    {
        var bytes = Data()
        if let body { bytes = try await Data(collecting: body, upTo: 1 << 20) }
        requests.append(Sent(method: request.method.rawValue, path: request.path ?? "", body: bytes))
        let problem = #"""
            {"type":"https://quire.dev/problems/invalid-filter","title":"Invalid filter","status":400,
             "detail":"filter: all[1]: unknown member \"nope\""}
            """#
        var response = HTTPResponse(status: .badRequest)
        response.headerFields[.contentType] = "application/problem+json"
        return (response, HTTPBody(problem))
    }
}
