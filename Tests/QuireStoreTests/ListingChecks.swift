// The checks of `GET /v1/lists` that both stores pass (SQLiteListingTests here, PostgresListingTests in
// QuirePostgresTests, which compiles this file through a symlink).
import Foundation
import Logging
import QuireAPI
import QuireAuth
import QuireCore
import QuireHTTP
import QuireTesting
import Testing

/// 10,000 list names in four families, so that byte order is not alphabetical order: upper case before lower
/// case, `-` before `.` before the digits (`inbox-1`, `inbox-10`, `inbox-100`, `inbox-1000`, `inbox-1001`…).
let listingFamilies: [(prefix: String, count: Int)] = [
    ("inbox-", 8_000), ("news-", 1_000), ("Zeta-", 500), ("a.b_c-", 500),
]

/// The sizes of the list `index` of a family: 1 to 3 sections, 0 to 3 items in the first, and a child under
/// its first item every fifth list that has items.
func listingSizes(_ index: Int) -> (sections: Int, topLevel: Int, child: Bool) {
    (1 + index % 3, index % 4, index % 5 == 0 && index % 4 > 0)
}

/// Every listed list as written, with its version and sizes, in byte order.
func listingExpected(version: UInt64 = 1) -> [ListSummary] {
    listingFamilies.flatMap { family in
        (0..<family.count).map { index in
            let (sections, topLevel, child) = listingSizes(index)
            return ListSummary(
                name: "\(family.prefix)\(index)", version: version, sections: sections,
                items: topLevel + (child ? 1 : 0))
        }
    }
    .sorted { ListNameRange.precedes($0.name, $1.name) }
}

/// The document of list `index` (``listingSizes(_:)``).
func listingDocument(_ index: Int) -> String {
    let (sections, topLevel, child) = listingSizes(index)
    let items = (0..<topLevel).map { item in
        let children = item == 0 && child ? #","children":[{"id":"c","type":"t"}]"# : ""
        return #"{"id":"i\#(item)","type":"t"\#(children)}"#
    }
    let sectionTexts = (0..<sections).map { section in
        #"{"id":"s\#(section)","items":[\#(section == 0 ? items.joined(separator: ",") : "")]}"#
    }
    return #"{"sections":[\#(sectionTexts.joined(separator: ","))]}"#
}

/// A service with JSON Web Tokens and the write token `writer`, on `store`, over loopback HTTP.
final class ListingService: Sendable {
    let service: QuireService
    let server: TestServer
    let tokens: TokenSettings

    static let writer = [("Authorization", "Bearer writer")]

    init(store: any ListStore) async throws {
        var tokens = TokenSettings()
        tokens.secret = String(repeating: "listing-secret-", count: 3)
        self.tokens = tokens
        var configuration = QuireService.Configuration()
        configuration.http.host = "127.0.0.1"
        configuration.http.port = 0
        configuration.http.threads = 2
        configuration.demo.seed = false
        configuration.writeToken = "writer"
        configuration.jwt = tokens
        service = QuireService(
            configuration: configuration, logger: TestServer.logger, store: store,
            keys: try await TokenKeys.load(tokens))
        try service.startAndLoad()
        server = try TestServer(running: service.server)
    }

    func stop() {
        service.shutdown()
    }

    /// `Authorization` with a JSON Web Token of `scope`.
    func bearer(scope: String) async throws -> [(String, String)] {
        let token = try await DevelopmentToken.mint(subject: "reader", scope: scope, lifetime: 600, settings: tokens)
        return [("Authorization", "Bearer \(token)")]
    }

    /// One `GET /v1/lists` with `query`: its status, and its body as JSON when it is `200`.
    func get(_ query: String, headers: [(String, String)] = ListingService.writer) throws -> (
        status: Int, body: [String: Any], problem: String?
    ) {
        let response = try server.request("GET", "/v1/lists" + (query.isEmpty ? "" : "?\(query)"), headers: headers)
        let body = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        let problem = (body["type"] as? String).map { String($0.split(separator: "/").last ?? "") }
        return (response.status, body, problem)
    }

    /// Every page of `GET /v1/lists?limit=&prefix=`, followed by its cursors; checks that every page but the
    /// last is full and says so, and returns the lists of all pages, in the order served.
    func walk(
        limit: Int? = nil, prefix: String? = nil, headers: [(String, String)] = ListingService.writer,
        _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [ListSummary] {
        let pageSize = limit ?? 100
        var parameters: [String] = []
        if let limit { parameters.append("limit=\(limit)") }
        if let prefix { parameters.append("prefix=\(prefix)") }
        var lists: [ListSummary] = []
        var cursor: String?
        for _ in 0..<20_000 {
            let query = (parameters + (cursor.map { ["after=\($0)"] } ?? [])).joined(separator: "&")
            let (status, body, _) = try get(query, headers: headers)
            try #require(status == 200, comment, sourceLocation: sourceLocation)
            let page = try #require(body["page"] as? [String: Any], comment, sourceLocation: sourceLocation)
            let entries = try #require(body["lists"] as? [[String: Any]], comment, sourceLocation: sourceLocation)
            for entry in entries {
                lists.append(
                    ListSummary(
                        name: entry["list"] as? String ?? "?",
                        version: (entry["version"] as? NSNumber)?.uint64Value ?? 0,
                        sections: (entry["sections"] as? NSNumber)?.intValue ?? -1,
                        items: (entry["items"] as? NSNumber)?.intValue ?? -1))
            }
            let hasNext = page["hasNext"] as? Bool
            let next = page["next"] as? String
            #expect(hasNext == (next != nil), comment, sourceLocation: sourceLocation)
            guard let next, hasNext == true else {
                #expect(page["next"] is NSNull, comment, sourceLocation: sourceLocation)
                #expect(entries.count <= pageSize, comment, sourceLocation: sourceLocation)
                return lists
            }
            #expect(entries.count == pageSize, "a page followed by another is full", sourceLocation: sourceLocation)
            cursor = next
        }
        Issue.record("the pages never ended", sourceLocation: sourceLocation)
        return lists
    }

    /// Expects `GET /v1/lists?<query>` to be refused with `status` and the problem `slug`.
    func expectRefused(
        _ query: String, _ slug: String, status: Int = 400, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (answer, _, problem) = try get(query)
        #expect(answer == status, "\(query)", sourceLocation: sourceLocation)
        #expect(problem == slug, "\(query)", sourceLocation: sourceLocation)
    }

    /// Pages through the 10,000 lists of ``listingFamilies`` (the store holds those and no other list, at
    /// version 1, none of them in the registry's memory): everything, with prefixes, with scopes, every list
    /// exactly once and in order; then limits and cursors that are refused.
    func checkPagingThroughTheFamilies() async throws {
        let everything = listingExpected()
        #expect(service.registry.resident.lists == 0, "the registry holds none of them")
        #expect(try walk(limit: 1_000) == everything, "10 full pages, the last saying it is the last")
        #expect(try walk() == everything, "100 pages of the default limit")
        let firstThree = try get("limit=3").body["lists"] as? [[String: Any]]
        #expect(firstThree?.compactMap { $0["list"] as? String } == ["Zeta-0", "Zeta-1", "Zeta-10"])
        #expect(try walk(limit: 333, prefix: "inbox-1") == everything.filter { $0.name.hasPrefix("inbox-1") })
        #expect(try walk(limit: 7, prefix: "a.b_c-4") == everything.filter { $0.name.hasPrefix("a.b_c-4") })
        #expect(try walk(prefix: "inbox-10000").isEmpty)
        #expect(try walk(prefix: "").count == everything.count, "an empty prefix is none")

        // A token that reads about one list in eight: its pages hold only those, full, in order.
        let scoped = try await bearer(scope: "read:inbox-1* read:inbox-42 read:news-9* read:nothing-* write:inbox-*")
        let readable = everything.filter {
            $0.name.hasPrefix("inbox-1") || $0.name == "inbox-42" || $0.name.hasPrefix("news-9")
        }
        #expect(readable.count == 1_111 + 1 + 111)
        #expect(try walk(limit: 37, headers: scoped) == readable)
        #expect(try walk(limit: 1_000, headers: scoped) == readable)
        #expect(try walk(headers: scoped) == readable)
        #expect(
            try walk(limit: 10, prefix: "inbox-10", headers: scoped)
                == readable.filter { $0.name.hasPrefix("inbox-10") })
        #expect(try walk(prefix: "inbox-4", headers: scoped).map(\.name) == ["inbox-42"])
        #expect(try walk(prefix: "news-", headers: scoped) == readable.filter { $0.name.hasPrefix("news-") })
        #expect(try walk(prefix: "Zeta-", headers: scoped).isEmpty)
        let nothing = try await bearer(scope: "write:* read:missing-* read:inbox-99999 read:bad/name read:Ω*")
        #expect(try walk(headers: nothing).isEmpty)
        let everyList = try await bearer(scope: "read:*")
        #expect(try walk(limit: 1_000, headers: everyList) == everything)

        // Limits and prefixes out of range, as every integer parameter: 400 invalid-request.
        for limit in ["0", "1001", "-1", "abc", "", "1.5", "99999999999999999999"] {
            try expectRefused("limit=\(limit)", "invalid-request")
        }
        for prefix in ["a%2Fb", "%C3%A9", String(repeating: "a", count: 129), "inbox-%20"] {
            try expectRefused("prefix=\(prefix)", "invalid-request")
        }
        // Cursors: another prefix's, edited ones, a page's, and made-up ones: 400 invalid-cursor.
        let first = try get("limit=5&prefix=inbox-")
        let cursor = try #require((first.body["page"] as? [String: Any])?["next"] as? String)
        #expect(try get("limit=5&prefix=inbox-&after=\(cursor)").status == 200)
        try expectRefused("limit=5&after=\(cursor)", "invalid-cursor")
        try expectRefused("limit=5&prefix=inbox-1&after=\(cursor)", "invalid-cursor")
        var edited = Array(cursor)
        edited[8] = edited[8] == "A" ? "B" : "A"
        try expectRefused("limit=5&prefix=inbox-&after=\(String(edited))", "invalid-cursor")
        try expectRefused("limit=5&prefix=inbox-&after=\(cursor.dropLast(3))", "invalid-cursor")
        try expectRefused("after=\(ListCursor(after: "../etc", prefix: "").encoded)", "invalid-cursor")
        for made in ["", "!!", "AAAA", "TA", String(repeating: "Q", count: 5_000)] {
            try expectRefused("after=\(made)", "invalid-cursor")
        }
        // A stateless page's cursor is no listing's.
        let pageCursor = PageCursor(direction: .after, position: 0, anchors: ["i0"], list: "inbox-7").encoded
        try expectRefused("after=\(pageCursor)", "invalid-cursor")
    }

    /// The sizes and versions listed follow writes and deletes made over HTTP, at once (lists named `sized-…`).
    func checkSizesFollowWrites() throws {
        let json = Self.writer + [("Content-Type", "application/json")]
        func put(_ list: String, _ document: String) throws -> Int {
            try server.request("PUT", "/v1/lists/\(list)", headers: json, body: Array(document.utf8)).status
        }
        func ops(_ list: String, _ ops: String) throws -> Int {
            try server.request("POST", "/v1/lists/\(list)/ops", headers: json, body: Array(#"{"ops":[\#(ops)]}"#.utf8))
                .status
        }
        func listed() throws -> [ListSummary] { try walk(prefix: "sized-") }
        #expect(try listed().isEmpty)
        let tree = #"""
            {"sections":[{"id":"a","items":[{"id":"1","type":"t","children":[{"id":"1a","type":"t"},
            {"id":"1b","type":"t","children":[{"id":"1b1","type":"t"}]}]},{"id":"2","type":"t"}]},{"id":"b","items":[]}]}
            """#
        #expect(try put("sized-tree", tree) == 201)
        #expect(try put("sized-empty", #"{"sections":[]}"#) == 201)
        #expect(
            try listed() == [
                ListSummary(name: "sized-empty", version: 1, sections: 0, items: 0),
                ListSummary(name: "sized-tree", version: 1, sections: 2, items: 5),
            ])
        #expect(try ops("sized-tree", #"{"op":"insertItems","section":"b","items":[{"id":"3","type":"t"}]}"#) == 200)
        #expect(try ops("sized-tree", #"{"op":"removeItems","ids":["1b"]}"#) == 200)
        #expect(try ops("sized-empty", #"{"op":"insertSections","sections":[{"id":"x","items":[]}]}"#) == 200)
        #expect(
            try listed() == [
                ListSummary(name: "sized-empty", version: 2, sections: 1, items: 0),
                ListSummary(name: "sized-tree", version: 3, sections: 2, items: 4),
            ])
        #expect(try ops("sized-tree", #"{"op":"removeSections","ids":["a"]}"#) == 200)
        #expect(try listed().last == ListSummary(name: "sized-tree", version: 4, sections: 1, items: 1))
        #expect(try server.request("DELETE", "/v1/lists/sized-tree", headers: Self.writer).status == 204)
        #expect(try listed().map(\.name) == ["sized-empty"])
        // Created again: its versions go on from the deleted list's, its sizes are its own.
        #expect(try put("sized-tree", #"{"sections":[{"id":"z","items":[{"id":"9","type":"t"}]}]}"#) == 201)
        #expect(try listed().last == ListSummary(name: "sized-tree", version: 5, sections: 1, items: 1))
        #expect(try put("sized-tree", tree) == 200)
        #expect(try listed().last == ListSummary(name: "sized-tree", version: 6, sections: 2, items: 5))
    }
}
