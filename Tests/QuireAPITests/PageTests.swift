import Foundation
import QuireCore
import QuireHTTP
import QuireTesting
import Testing

@testable import QuireAPI

/// Stateless pages (openapi.yaml) over HTTP.
@Suite("Stateless pages")
struct PageTests {
    /// Follows `next` cursors from the first page; returns the ids seen.
    static func walk(_ api: APIFixture, list: String, limit: Int, between: (Int) throws -> Void = { _ in }) throws
        -> [String]
    {
        var ids: [String] = []
        var target = "/v1/lists/\(list)?limit=\(limit)"
        var pages = 0
        while true {
            let response = try api.call("GET", target)
            try #require(response.status == 200, "\(response.text)")
            let object = try response.object()
            for section in object["sections"] as! [[String: Any]] {
                ids += (section["items"] as! [[String: Any]]).map { $0["id"] as! String }
            }
            let page = object["page"] as! [String: Any]
            guard let next = page["next"] as? String else { return ids }
            #expect(response.headers["Link"]?.contains("rel=\"next\"") == true)
            target = "/v1/lists/\(list)?limit=\(limit)&after=\(next)"
            pages += 1
            try between(pages)
        }
    }

    @Test("pages of a list, forward by cursor, cover it exactly; sections carry offset and count")
    func forward() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 4, items: 25, childrenEvery: 5))
        #expect(try Self.walk(api, list: "l", limit: 7) == api.listIDs("l"))
        let first = try api.call("GET", "/v1/lists/l?limit=30").object()
        let sections = first["sections"] as! [[String: Any]]
        #expect(sections.map { $0["id"] as! String } == ["sec-0", "sec-1"])
        #expect(sections[1]["offset"] as? Int == 0)
        #expect(sections[1]["count"] as? Int == 25)
        #expect((sections[1]["items"] as! [Any]).count == 5)
        let page = first["page"] as! [String: Any]
        #expect(page["total"] as? Int == 100)
        #expect(page["hasPrev"] as? Bool == false)
        #expect(page["prev"] is NSNull)
        let withChildren = (sections[0]["items"] as! [[String: Any]])[0]
        #expect(withChildren["childCount"] as? Int == 2)
        #expect(withChildren["children"] == nil)
    }

    @Test("backward by the before cursor, and the default limit of 50")
    func backward() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 120))
        let first = try api.call("GET", "/v1/lists/l").object()
        #expect(((first["sections"] as! [[String: Any]])[0]["items"] as! [Any]).count == 50)
        let second = try api.call(
            "GET", "/v1/lists/l?limit=50&after=\((first["page"] as! [String: Any])["next"] as! String)"
        ).object()
        let previous = (second["page"] as! [String: Any])["prev"] as! String
        let back = try api.call("GET", "/v1/lists/l?limit=10&before=\(previous)").object()
        let ids = ((back["sections"] as! [[String: Any]])[0]["items"] as! [[String: Any]]).map { $0["id"] as! String }
        #expect(ids == (40..<50).map { "s0-\($0)" })
    }

    @Test("a cursor still works after its item is deleted: nothing skipped, nothing repeated")
    func cursorSurvivesDeletion() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 30))
        let first = try api.call("GET", "/v1/lists/l?limit=10").object()
        let next = (first["page"] as! [String: Any])["next"] as! String
        try api.ops("l", [["op": "removeItems", "ids": ["s0-9", "s0-8"]]])
        let second = try api.call("GET", "/v1/lists/l?limit=5&after=\(next)").object()
        let ids = ((second["sections"] as! [[String: Any]])[0]["items"] as! [[String: Any]]).map { $0["id"] as! String }
        #expect(ids == ["s0-10", "s0-11", "s0-12", "s0-13", "s0-14"])
        // Every anchor gone: the position is used.
        try api.ops("l", [["op": "removeItems", "ids": ["s0-7", "s0-6"]]])
        let third = try api.call("GET", "/v1/lists/l?limit=2&after=\(next)").object()
        #expect(((third["sections"] as! [[String: Any]])[0]["items"] as! [Any]).count == 2)
    }

    @Test("ETag and If-None-Match: 304 for the current version, 200 after a write")
    func conditional() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3))
        let page = try api.call("GET", "/v1/lists/l")
        #expect(page.headers["ETag"] == "\"1\"")
        let notModified = try api.call("GET", "/v1/lists/l", headers: [("If-None-Match", "\"1\"")])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        try api.ops("l", [["op": "removeItems", "ids": ["s0-0"]]])
        let changed = try api.call("GET", "/v1/lists/l", headers: [("If-None-Match", "\"1\"")])
        #expect(changed.status == 200)
        #expect(changed.headers["ETag"] == "\"2\"")
    }

    @Test("bad parameters: limit, both cursors, a foreign cursor; an unknown list")
    func badParameters() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3))
        for query in [
            "limit=0", "limit=501", "limit=ten", "limit=", "limit", "limit=+", "limit=%2B", "limit=-", "limit=-2",
            "limit=2%20", "limit=%202", "limit=0x2", "limit=2e0", "limit=99999999999999999999", "limit=%D9%A2",
        ] {
            let response = try api.call("GET", "/v1/lists/l?\(query)")
            #expect(response.status == 400, "\(query)")
            #expect(try response.problemSlug() == "invalid-request")
        }
        // Read as Int("…") reads them: a sign, leading zeros; the first item of a repeated name.
        for query in ["limit=%2B2", "limit=002", "limit=2&limit=ten"] {
            let response = try api.call("GET", "/v1/lists/l?\(query)")
            #expect(response.status == 200, "\(query)")
            let sections = try response.object()["sections"] as! [[String: Any]]
            #expect(sections.map { ($0["items"] as! [Any]).count }.reduce(0, +) == 2, "\(query)")
        }
        let next = try api.call("GET", "/v1/lists/l?limit=1").object()["page"] as! [String: Any]
        let both = try api.call("GET", "/v1/lists/l?after=\(next["next"] as! String)&before=\(next["next"] as! String)")
        #expect(try both.problemSlug() == "invalid-request")
        for cursor in ["garbage", "AQE", "", "%FF"] {
            let response = try api.call("GET", "/v1/lists/l?after=\(cursor)")
            #expect(response.status == 400, "cursor \(cursor)")
            #expect(try response.problemSlug() == "invalid-cursor")
        }
        let wrongDirection = try api.call("GET", "/v1/lists/l?before=\(next["next"] as! String)")
        #expect(try wrongDirection.problemSlug() == "invalid-cursor")
        // A cursor of another list, where it would name a position that means nothing.
        try api.put("m", listDocument(sections: 1, items: 3))
        let foreign = try api.call("GET", "/v1/lists/m?after=\(next["next"] as! String)")
        #expect(foreign.status == 400)
        #expect(try foreign.problemSlug() == "invalid-cursor")
        #expect(try api.call("GET", "/v1/lists/nope").problemSlug() == "list-not-found")
    }

    @Test("the same page of the same version is served from the cache")
    func cached() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 30))
        let first = try api.call("GET", "/v1/lists/l?limit=5")
        let misses = api.service.context.pageCache.missCount
        let second = try api.call("GET", "/v1/lists/l?limit=5")
        #expect(first.body == second.body)
        #expect(api.service.context.pageCache.missCount == misses)
        #expect(api.service.context.pageCache.hitCount >= 1)
    }

    /// A cached page answers before its inputs are checked again (`APIContext.page`): only a request with the very
    /// inputs it was made for may find it, and anything else is checked, and refused, as it would be cold.
    @Test("a cached page answers only its own inputs: a request that adds or changes one is checked in full")
    func cachedPageAnswersOnlyItsInputs() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3))
        let cursor = try api.call("GET", "/v1/lists/l?limit=1").object()["page"] as! [String: Any]
        let next = cursor["next"] as! String
        let warm = try api.call("GET", "/v1/lists/l?limit=1&after=\(next)")
        #expect(warm.status == 200)
        let hits = api.service.context.pageCache.hitCount
        #expect(try api.call("GET", "/v1/lists/l?limit=1&after=\(next)").body == warm.body)
        #expect(api.service.context.pageCache.hitCount == hits + 1)
        let both = try api.call("GET", "/v1/lists/l?limit=1&after=\(next)&before=\(next)")
        #expect(both.status == 400)
        #expect(try both.problemSlug() == "invalid-request")
        for limit in ["0", "ten", ""] {
            let response = try api.call("GET", "/v1/lists/l?limit=\(limit)&after=\(next)")
            #expect(try response.problemSlug() == "invalid-request", "limit=\(limit)")
        }
        #expect(try api.call("GET", "/v1/lists/l?limit=1&before=\(next)").problemSlug() == "invalid-cursor")
        #expect(try api.call("GET", "/v1/lists/l?limit=1&after=\(next)x").problemSlug() == "invalid-cursor")
        let other = try api.call("GET", "/v1/lists/l?after=\(next)")  // the default limit: another page
        #expect(other.status == 200 && other.body != warm.body)
        // The name is checked before the limit, as on a cold cache.
        let badName = try api.call("GET", "/v1/lists/l!?limit=0").object()
        #expect((badName["detail"] as? String)?.contains("list name") == true)
    }

    @Test("a cached page is replaced when its list moves on, and a deleted list's cached page is never served")
    func cacheFollowsTheList() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 30))
        #expect(try api.call("GET", "/v1/lists/l?limit=5").headers["ETag"] == "\"1\"")
        try api.ops("l", [["op": "removeItems", "ids": ["s0-0"]]])
        let misses = api.service.context.pageCache.missCount
        let moved = try api.call("GET", "/v1/lists/l?limit=5")
        #expect(moved.headers["ETag"] == "\"2\"")
        #expect(!moved.text.contains("\"s0-0\""))
        #expect(api.service.context.pageCache.missCount == misses + 1, "the old version's page is not current")
        #expect(try api.call("GET", "/v1/lists/l?limit=5").body == moved.body)
        #expect(api.service.context.pageCache.missCount == misses + 1, "the new one is cached in its place")
        #expect(try api.call("DELETE", "/v1/lists/l").status == 204)
        #expect(try api.call("GET", "/v1/lists/l?limit=5").problemSlug() == "list-not-found")
    }

    @Test(
        "a list deleted and created again: its pages and first session windows are the new list's, not cached old ones")
    func recreatedList() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3))
        func sectionCount(_ response: ClientResponse) throws -> Int {
            (try response.object()["sections"] as! [[String: Any]]).count
        }
        // Both caches hold version 1 of the first list.
        #expect(try sectionCount(api.call("GET", "/v1/lists/l?limit=5")) == 1)
        #expect(try sectionCount(api.call("POST", "/v1/lists/l/sessions", json: ["limit": 5])) == 1)
        #expect(try api.call("DELETE", "/v1/lists/l").status == 204)
        // Created again: another content, numbered on from the deleted list's version 1.
        #expect(try api.put("l", listDocument(sections: 2, items: 2)) == 2)
        #expect(try sectionCount(api.call("GET", "/v1/lists/l?limit=5")) == 2)
        let session = try api.call("POST", "/v1/lists/l/sessions", json: ["limit": 5])
        #expect(session.status == 201)
        #expect(try sectionCount(session) == 2)
    }

    @Test(
        "a list deleted and created again never reuses a version: a cache's old ETag gets the new content, an old If-Match 412"
    )
    func recreatedListVersions() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3))
        try api.ops("l", [["op": "removeItems", "ids": ["s0-0"]]])
        #expect(try api.call("GET", "/v1/lists/l").headers["ETag"] == "\"2\"")
        #expect(try api.call("DELETE", "/v1/lists/l").status == 204)
        // A producer read version 2 of the old list; another deleted it and wrote the new one twice.
        #expect(try api.put("l", listDocument(sections: 2, items: 2)) == 3)
        try api.ops("l", [["op": "removeItems", "ids": ["s0-0"]]])
        for old in ["\"1\"", "\"2\""] {
            let page = try api.call("GET", "/v1/lists/l", headers: [("If-None-Match", old)])
            #expect(page.status == 200, "a cache holding the old list's \(old) gets the new list")
            #expect(page.headers["ETag"] == "\"4\"")
            let stale = try api.call(
                "PUT", "/v1/lists/l", json: listDocument(sections: 1, items: 1), headers: [("If-Match", old)])
            #expect(stale.status == 412, "a write built on the old list's \(old) is refused")
        }
        #expect(try api.call("GET", "/v1/lists/l", headers: [("If-None-Match", "\"4\"")]).status == 304)
        #expect(try api.call("GET", "/v1/lists/l").headers["ETag"] == "\"4\"")
    }

    @Test("cursors round-trip and reject tampering")
    func cursorEncoding() {
        let cursor = PageCursor(
            direction: .after, position: 123_456, anchors: ["a", "ü-ñ", String(repeating: "x", count: 256)],
            list: "inbox")
        #expect(PageCursor(encoded: cursor.encoded) == cursor)
        #expect(cursor.isIssued(for: "inbox") && !cursor.isIssued(for: "inbox2") && !cursor.isIssued(for: ""))
        #expect(
            cursor.encoded.utf8.allSatisfy {
                $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (48...122).contains($0)
            })
        var tampered = Array(cursor.encoded.utf8)
        tampered.removeLast(3)
        #expect(PageCursor(encoded: String(decoding: tampered, as: UTF8.self)) == nil)
        #expect(PageCursor(encoded: "") == nil)
    }

    @Test(
        "integer query items are read from their bytes as Int(_: String) reads them",
        arguments: [
            "", "+", "-", "0", "-0", "+0", "007", "+20", "-20", "20", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809", "99999999999999999999", " 1", "1 ", "1_0", "0x10", "1e3",
            "\u{0662}", "--1", "+-1", "١٢",
        ])
    func decimal(text: String) {
        let parsed = Array(text.utf8).withUnsafeBufferPointer { RequestInput.decimal($0) }
        #expect(parsed == Int(text), "\(text)")
    }

}
