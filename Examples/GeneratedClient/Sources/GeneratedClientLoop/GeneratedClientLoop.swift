// A session loop through the client that swift-openapi-generator's build plugin makes from the repository's
// openapi.yaml, run by scripts/test/client-test against a live `quire serve`:
//
//     swift run GeneratedClientLoop BASE_URL TOKEN
//
// It writes a list (sections with headers and footers), applies every kind of operation in one request,
// follows two sessions (batch and sequential) through changes after writes, extend, expand, collapse and
// reset, reads a 409 and a 404 as typed problems, and follows a filtered session whose filter is built from
// the generated types (and reads filtered pages, and an invalid filter as a typed 400). Every answer is decoded into the type the document
// names for its status and encoded again; the result must be the JSON the server sent. One difference is
// allowed, and counted: a member that is `null` in the answer and absent when encoded again. The generator
// makes a required nullable member an Optional and encodes `nil` by leaving the member out
// (apple/swift-openapi-generator#934); decoding reads an absent member as `nil`, so no information is lost.

import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

typealias Schemas = Components.Schemas

/// Keeps the body of the last answer as it came off the wire, and sends the token.
final class Recorder: ClientMiddleware {
    let token: String
    let last = Mutex<Data?>(nil)

    init(token: String) { self.token = token }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        let (response, responseBody) = try await next(request, body, baseURL)
        guard let responseBody else {
            last.withLock { $0 = nil }
            return (response, nil)
        }
        let data = try await Data(collecting: responseBody, upTo: 16 << 20)
        last.withLock { $0 = data }
        return (response, HTTPBody(data))
    }
}

/// A JSON value, to compare two documents as values (member order and number spelling aside).
indirect enum JSON: Decodable, Equatable {
    case null, bool(Bool), int(Int64), double(Double), string(String), array([JSON]), object([String: JSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSON].self))
        }
    }
}

struct Mismatch: Error, CustomStringConvertible {
    let description: String
}

/// Where `again` differs from `sent`, other than a `null` member left out (counted in `nulls`).
func difference(_ sent: JSON, _ again: JSON, at path: String, nulls: inout Int) -> String? {
    switch (sent, again) {
    case (.object(let a), .object(let b)):
        for (key, value) in a.sorted(by: { $0.key < $1.key }) {
            if let other = b[key] {
                if let found = difference(value, other, at: "\(path).\(key)", nulls: &nulls) { return found }
            } else if value == .null {
                nulls += 1
            } else {
                return "\(path).\(key) is missing from the encoded value"
            }
        }
        if let extra = b.keys.sorted().first(where: { a[$0] == nil }) { return "\(path).\(extra) was added" }
        return nil
    case (.array(let a), .array(let b)):
        guard a.count == b.count else { return "\(path) has \(b.count) elements instead of \(a.count)" }
        for (index, pair) in zip(a, b).enumerated() {
            if let found = difference(pair.0, pair.1, at: "\(path)[\(index)]", nulls: &nulls) { return found }
        }
        return nil
    case (.int(let a), .double(let b)), (.double(let b), .int(let a)):
        return Double(a) == b ? nil : "\(path): \(sent) became \(again)"
    default:
        return sent == again ? nil : "\(path): \(sent) became \(again)"
    }
}

final class Loop: Sendable {
    let client: Client
    let recorder: Recorder
    let checked = Mutex((answers: 0, nulls: 0))

    init(base: URL, token: String) {
        recorder = Recorder(token: token)
        client = Client(serverURL: base, transport: URLSessionTransport(), middlewares: [recorder])
    }

    /// `value` encoded again must be the body the server sent.
    @discardableResult
    func same<T: Encodable>(_ value: T, _ what: String) throws -> T {
        guard let sent = recorder.last.withLock({ $0 }) else { throw Mismatch(description: "\(what): no body") }
        let again = try JSONEncoder().encode(value)
        var nulls = 0
        let a = try JSONDecoder().decode(JSON.self, from: sent)
        let b = try JSONDecoder().decode(JSON.self, from: again)
        if let found = difference(a, b, at: what, nulls: &nulls) {
            throw Mismatch(
                description:
                    "\(found)\n  sent: \(String(decoding: sent, as: UTF8.self))\n  again: \(String(decoding: again, as: UTF8.self))"
            )
        }
        checked.withLock {
            $0.answers += 1
            $0.nulls += nulls
        }
        return value
    }
}

func unexpected(_ output: some Sendable, _ what: String) -> Mismatch {
    Mismatch(description: "\(what): unexpected answer \(output)")
}

func value(_ any: (any Sendable)?) throws -> OpenAPIValueContainer {
    try OpenAPIValueContainer(unvalidatedValue: any)
}

func view(_ type: String, _ data: [String: any Sendable]?) throws -> Schemas.Supplementary {
    Schemas.Supplementary(_type: type, data: try value(data))
}

func item(_ id: String, _ type: String = "message", data: (any Sendable)? = nil, children: [Schemas.Item]? = nil)
    throws -> Schemas.Item
{
    Schemas.Item(id: id, _type: type, data: try data.map { try value($0) }, children: children)
}

@main
struct GeneratedClientLoop {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let base = URL(string: arguments[1]) else {
            print("usage: GeneratedClientLoop BASE_URL TOKEN")
            exit(2)
        }
        let loop = Loop(base: base, token: arguments[2])
        try await readme(base)
        try await run(loop)
        try await filtered(loop)
        let checked = loop.checked.withLock { $0 }
        print(
            "swift client: \(checked.answers) answers decoded and encoded back to the server's JSON"
                + " (\(checked.nulls) null members left out on encoding, apple/swift-openapi-generator#934)"
        )
    }

    /// The example of docs/app-developers.md ("Generated clients"): a page of the demo list, without a token.
    static func readme(_ base: URL) async throws {
        let client = Client(serverURL: base, transport: URLSessionTransport())
        let page = try await client.getListPage(path: .init(list: "demo"), query: .init(limit: 20)).ok.body.json
        for section in page.sections {
            print(section.id, section.header?._type ?? "no header", section.items.map(\.id))
        }
        if let next = page.page.next {
            let more = try await client.getListPage(path: .init(list: "demo"), query: .init(after: next)).ok.body.json
            print("next page:", more.sections.map(\.id))
        }
    }

    static func run(_ loop: Loop) async throws {
        let client = loop.client
        let list = "gen-swift"

        // A PUT with headers and footers (and a section without either).
        let document = Schemas.ListDocument(sections: [
            Schemas.Section(
                id: "today",
                header: try view("day-header", ["title": "Today"]),
                footer: try view("day-footer", ["n": 4]),
                items: [
                    try item("m-1", data: ["from": "Ada", "text": "Hi"]),
                    try item(
                        "t-9", "thread", data: ["title": "Trip"],
                        children: [try item("m-7", data: ["text": "Tickets?"])]),
                    try item("m-2"),
                    try item("m-3", data: [1, 2.5, true, "x"] as [any Sendable]),
                ]
            ),
            Schemas.Section(
                id: "yesterday",
                header: try view("day-header", ["title": "Yesterday"]),
                items: [try item("m-4"), try item("m-5", data: 5)]
            ),
            Schemas.Section(id: "older", items: [try item("m-6", data: "old")]),
        ])
        guard case .created(let created) = try await client.putList(path: .init(list: list), body: .json(document))
        else { throw Mismatch(description: "PUT did not create the list") }
        let first = try loop.same(try created.body.json, "put")
        guard created.headers.eTag == "\"\(first.version)\"" else { throw Mismatch(description: "ETag") }

        // Stateless pages, both ends, and the index.
        let page = try loop.same(
            try await client.getListPage(path: .init(list: list), query: .init(limit: 3)).ok.body.json, "page")
        guard let next = page.page.next, page.sections.first?.header?._type == "day-header" else {
            throw Mismatch(description: "page 1: \(page)")
        }
        try loop.same(
            try await client.getListPage(path: .init(list: list), query: .init(limit: 3, after: next)).ok.body.json,
            "page 2")
        try loop.same(try await client.listLists().ok.body.json, "lists")

        // Two sessions, one per format.
        let batch = try loop.same(
            try await client.createSession(path: .init(list: list), body: .json(.init(limit: 4, format: .batch)))
                .created.body.json,
            "session batch"
        )
        let sequential = try loop.same(
            try await client.createSession(
                path: .init(list: list),
                body: .json(.init(limit: 6, format: .sequential, expanded: ["t-9"]))
            ).created.body.json,
            "session sequential"
        )

        // Every kind of operation in one request.
        let ops: [Schemas.Op] = [
            .insertItems(
                .init(
                    op: .insertItems, section: "today", items: [try item("m-10", data: ["text": "new"])], after: "m-1")),
            .insertItems(.init(op: .insertItems, parent: "t-9", items: [try item("m-11")], before: "m-7")),
            .removeItems(.init(op: .removeItems, ids: ["m-3"])),
            .updateItems(.init(op: .updateItems, items: [try item("m-2", data: ["text": "edited"])])),
            .moveItem(.init(op: .moveItem, id: "m-5", section: "today", after: "m-10")),
            .insertSections(
                .init(
                    op: .insertSections,
                    sections: [
                        Schemas.Section(
                            id: "later", header: try view("day-header", ["title": "Later"]), items: [try item("m-20")])
                    ],
                    before: "today"
                )
            ),
            .removeSections(.init(op: .removeSections, ids: ["older"])),
            .updateSection(
                .init(
                    op: .updateSection, id: "yesterday", header: try view("day-header", ["title": "Yday"]),
                    footer: try view("day-footer", nil))
            ),
            .moveSection(.init(op: .moveSection, id: "later", after: "yesterday")),
        ]
        let written = try loop.same(
            try await client.applyListOps(path: .init(list: list), body: .json(.init(ops: ops))).ok.body.json,
            "ops"
        )
        guard written.version == first.version + 1 else {
            throw Mismatch(description: "ops version \(written.version)")
        }

        var seen = Set<String>()
        var b = (id: batch.session, since: batch.version, seq: batch.seq)
        var s = (id: sequential.session, since: sequential.version, seq: sequential.seq)

        /// A changes answer: typed by its case, and where the window is now.
        func answer(_ value: Schemas.ChangesAnswer, _ what: String) throws -> (version: Int, seq: Int) {
            try loop.same(value, what)
            switch value {
            case .DiffAnswer(.batch(let changes)):
                seen.insert("batch")
                return (changes.version, changes.seq)
            case .DiffAnswer(.sequential(let changes)):
                seen.insert("sequential")
                return (changes.version, changes.seq)
            case .ResetAnswer(let reset):
                seen.insert("reset")
                return (reset.version, reset.seq)
            }
        }

        (b.since, b.seq) = try answer(
            try await client.getSessionChanges(path: .init(id: b.id), query: .init(since: b.since)).ok.body.json,
            "changes batch"
        )
        (s.since, s.seq) = try answer(
            try await client.getSessionChanges(path: .init(id: s.id), query: .init(seq: s.seq)).ok.body.json,
            "changes sequential"
        )
        (b.since, b.seq) = try answer(
            try await client.getSessionChanges(path: .init(id: b.id), query: .init(seq: b.seq, extend: .next, limit: 3))
                .ok.body.json,
            "extend"
        )
        (b.since, b.seq) = try answer(
            try await client.expandSessionItem(path: .init(id: b.id), body: .json(.init(seq: b.seq, id: "t-9"))).ok.body
                .json,
            "expand"
        )
        (s.since, s.seq) = try answer(
            try await client.collapseSessionItem(path: .init(id: s.id), body: .json(.init(since: s.since, id: "t-9")))
                .ok.body.json,
            "collapse"
        )
        let reset = try loop.same(
            try await client.resetSession(path: .init(id: s.id), body: .json(.init(limit: 5))).ok.body.json,
            "reset"
        )
        (s.since, s.seq) = (reset.version, reset.seq)

        // A whole new content: more changes than a window is worth.
        let replacement = Schemas.ListDocument(
            sections: try (0..<4).map { k in
                Schemas.Section(id: "n-\(k)", items: try (0..<3).map { try item("x-\(k)-\($0)", "row") })
            }
        )
        try loop.same(
            try await client.putList(path: .init(list: list), body: .json(replacement)).ok.body.json, "put again")
        (s.since, s.seq) = try answer(
            try await client.getSessionChanges(path: .init(id: s.id), query: .init(since: s.since)).ok.body.json,
            "changes after put sequential"
        )
        (b.since, b.seq) = try answer(
            try await client.getSessionChanges(path: .init(id: b.id), query: .init(since: b.since)).ok.body.json,
            "changes after put batch"
        )
        guard seen.isSuperset(of: ["batch", "sequential"]) else { throw Mismatch(description: "seen \(seen)") }

        // A 409 and a 404, as typed problems.
        let stale = try await client.getSessionChanges(path: .init(id: b.id), query: .init(since: b.since + 100))
        guard case .conflict(let conflict) = stale else { throw unexpected(stale, "409") }
        let problem = try loop.same(try conflict.body.applicationProblemJson, "409")
        guard problem._type.rawValue == "https://quire.dev/problems/since-mismatch", problem.version == b.since,
            problem.seq == b.seq
        else {
            throw Mismatch(description: "409: \(problem)")
        }
        guard case .noContent = try await client.deleteSession(path: .init(id: b.id)) else {
            throw Mismatch(description: "DELETE session")
        }
        let missing = try await client.getSessionChanges(path: .init(id: b.id), query: .init(since: b.since))
        guard case .notFound(let notFound) = missing else { throw unexpected(missing, "404") }
        let gone = try loop.same(try notFound.body.applicationProblemJson, "404")
        guard gone._type == "https://quire.dev/problems/session-not-found", gone.status == 404 else {
            throw Mismatch(description: "404: \(gone)")
        }
        print("swift client: changes answers seen: \(seen.sorted().joined(separator: ", "))")
    }

    /// A filtered session (openapi.yaml) whose filter is made of the generated types, never JSON by hand: its
    /// window, its changes when items are written into and out of the filter, filtered pages through their
    /// cursors, and `400 invalid-filter` as a typed problem.
    static func filtered(_ loop: Loop) async throws {
        let client = loop.client
        let list = "gen-swift-filtered"
        let senders = ["Ada", "bot", "Grace", "system"]
        func message(_ n: Int, _ from: String, unread: Bool) throws -> Schemas.Item {
            let data: [String: any Sendable] = [
                "from": from, "text": "Message \(n) from \(from)", "unread": unread, "n": n,
            ]
            return try item("f-\(n)", data: data)
        }
        let document = Schemas.ListDocument(sections: [
            Schemas.Section(
                id: "inbox", header: try view("day-header", ["title": "Inbox"]),
                items: try (0..<12).map { try message($0, senders[$0 % 4], unread: $0 % 3 != 0) }),
            Schemas.Section(id: "bots", items: try (12..<15).map { try message($0, "bot", unread: true) }),
            Schemas.Section(
                id: "old",
                items: try (15..<20).map { try message($0, senders[$0 % 4], unread: $0 % 2 == 0) }
                    + [try item("t-1", "thread", data: ["title": "Trip"])]),
        ])
        guard case .created = try await client.putList(path: .init(list: list), body: .json(document)) else {
            throw Mismatch(description: "PUT \(list) did not create the list")
        }

        // Unread messages, not from a bot, that mention Ada (any case) or are old (n >= 15).
        let filter: Schemas.Filter = .FilterAll(
            .init(all: [
                .FilterTerm(.FilterEqTerm(.init(field: "type", eq: .case1("message")))),
                .FilterTerm(.FilterEqTerm(.init(field: "data.unread", eq: .case3(true)))),
                .FilterNot(
                    .init(
                        not: .FilterTerm(
                            .FilterInTerm(.init(field: "data.from", _in: [.case1("bot"), .case1("system")]))))
                ),
                .FilterAny(
                    .init(any: [
                        .FilterTerm(.FilterContainsTerm(.init(field: "data.text", contains: "ADA"))),
                        .FilterTerm(.FilterGteTerm(.init(field: "data.n", gte: .case1(15)))),
                    ])),
            ]))
        // The generated decoder tells the cases apart by their members: the filter decodes to itself.
        let filterJSON = try JSONEncoder().encode(filter)
        guard try JSONDecoder().decode(Schemas.Filter.self, from: filterJSON) == filter else {
            throw Mismatch(
                description: "the filter does not decode to itself: \(String(decoding: filterJSON, as: UTF8.self))")
        }

        func ids(_ sections: [Schemas.PageSection]) -> [String] {
            sections.map { "\($0.id): \($0.items.map(\.id).joined(separator: " "))" }
        }
        let session = try loop.same(
            try await client.createSession(path: .init(list: list), body: .json(.init(limit: 3, filter: filter)))
                .created.body.json,
            "filtered session"
        )
        // The bots section has no match: it is left out.
        guard ids(session.sections) == ["inbox: f-4 f-8", "old: f-16"], session.page.total == 4, session.page.hasNext
        else {
            throw Mismatch(description: "filtered session: \(ids(session.sections)), page \(session.page)")
        }

        // f-8 read (out of the filter), f-0 unread (into it), an unread message of Ada's among the bots' (the
        // section's first match: a section insert).
        try loop.same(
            try await client.applyListOps(
                path: .init(list: list),
                body: .json(
                    .init(ops: [
                        .updateItems(.init(op: .updateItems, items: [try message(8, "Ada", unread: false)])),
                        .updateItems(.init(op: .updateItems, items: [try message(0, "Ada", unread: true)])),
                        .insertItems(
                            .init(op: .insertItems, section: "bots", items: [try message(30, "Ada", unread: true)])),
                    ]))
            ).ok.body.json,
            "ops on the filtered list"
        )
        let changes = try loop.same(
            try await client.getSessionChanges(path: .init(id: session.session), query: .init(seq: session.seq)).ok
                .body.json,
            "filtered changes"
        )
        let total: Int
        switch changes {
        case .DiffAnswer(.batch(let diff)): total = diff.page.total
        case .DiffAnswer(.sequential(let diff)): total = diff.page.total
        case .ResetAnswer(let reset): total = reset.page.total
        }
        guard total == 5 else { throw Mismatch(description: "filtered changes: total \(total), 5 match") }
        // A reset of a filtered session is a page of the filtered list, named by the list's name.
        let reset = try loop.same(
            try await client.resetSession(path: .init(id: session.session), body: .json(.init(limit: 3))).ok.body.json,
            "filtered reset"
        )
        guard reset.reset.list == list, ids(reset.reset.sections) == ["inbox: f-0 f-4", "bots: f-30"],
            reset.page.total == 5
        else {
            throw Mismatch(
                description: "filtered reset: list \(reset.reset.list.debugDescription), \(ids(reset.reset.sections)), "
                    + "page \(reset.page)")
        }

        // Filtered pages: the filter as JSON text (the generated type, encoded), paged by their cursors.
        let text = String(decoding: try JSONEncoder().encode(filter), as: UTF8.self)
        let first = try loop.same(
            try await client.getListPage(path: .init(list: list), query: .init(limit: 2, filter: text)).ok.body.json,
            "filtered page"
        )
        guard ids(first.sections) == ["inbox: f-0 f-4"], first.page.total == 5, let next = first.page.next else {
            throw Mismatch(description: "filtered page: \(ids(first.sections)), page \(first.page)")
        }
        let second = try loop.same(
            try await client.getListPage(path: .init(list: list), query: .init(limit: 2, after: next, filter: text))
                .ok.body.json,
            "filtered page 2"
        )
        guard ids(second.sections) == ["bots: f-30", "old: f-16"] else {
            throw Mismatch(description: "filtered page 2: \(ids(second.sections))")
        }

        // Filters the server refuses, as typed problems: two operators in a term (as text), an empty all.
        let twoOperators = try await client.getListPage(
            path: .init(list: list), query: .init(filter: #"{"field":"data.from","eq":"Ada","ne":"Bob"}"#))
        guard case .badRequest(let bad) = twoOperators else { throw unexpected(twoOperators, "400 page") }
        let problem = try loop.same(try bad.body.applicationProblemJson, "400 page")
        let emptyAll = try await client.createSession(
            path: .init(list: list), body: .json(.init(filter: .FilterAll(.init(all: [])))))
        guard case .badRequest(let refused) = emptyAll else { throw unexpected(emptyAll, "400 session") }
        let refusal = try loop.same(try refused.body.applicationProblemJson, "400 session")
        for found in [problem, refusal] where found._type != "https://quire.dev/problems/invalid-filter" {
            throw Mismatch(description: "invalid filter: \(found)")
        }
        _ = try await client.deleteSession(path: .init(id: session.session))
        print("swift client: a filtered session and filtered pages, the filter made of the generated types")
    }
}
