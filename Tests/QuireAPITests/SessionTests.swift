import Foundation
import QuireClient
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

@testable import QuireAPI
@testable import QuireAuth
@testable import QuireCore

/// Sessions (openapi.yaml) over HTTP, each answer applied by QuireClient as a phone would.
@Suite("Sessions and changes")
struct SessionTests {
    @Test("create: 201, Location, the first page with session and format; around and expanded")
    func create() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 2, items: 10, childrenEvery: 3))
        let response = try api.call("POST", "/v1/lists/l/sessions", json: ["limit": 4, "format": "sequential"])
        #expect(response.status == 201)
        let object = try response.object()
        let id = try #require(object["session"] as? String)
        #expect(id.count >= 22)
        #expect(response.headers["Location"] == "/v1/sessions/\(id)")
        #expect(object["format"] as? String == "sequential")
        #expect(object["version"] as? Int == 1)
        let around = try SessionClient(api, list: "l", options: ["limit": 3, "around": "s1-5"])
        #expect(around.window.itemIDs == ["s1-4", "s1-5", "s1-6"])
        let expanded = try SessionClient(api, list: "l", options: ["limit": 4, "expanded": ["s0-0"]])
        #expect(expanded.window.itemIDs == ["s0-0", "s0-0-c0", "s0-0-c1", "s0-1"])
        let child = expanded.window.sections[0].items[1]
        #expect(child["parent"]?.stringValue == "s0-0")
        #expect(child["depth"] == .number(1))
        let empty = try api.call("POST", "/v1/lists/l/sessions")
        #expect(empty.status == 201)
        #expect(try api.call("POST", "/v1/lists/ghost/sessions").problemSlug() == "list-not-found")
        for bad in [["limit": 0], ["format": "xml"], ["expanded": "x"], ["unknown": 1]] as [[String: Any]] {
            #expect(try api.call("POST", "/v1/lists/l/sessions", json: bad).problemSlug() == "invalid-request")
        }
        // Of several unknown members, the first in byte order is named, whatever the body's order.
        let unknown = try api.call("POST", "/v1/lists/l/sessions", json: ["zeta": 1, "limit": 4, "beta": 2, "Z": 3])
        #expect(try unknown.problemSlug() == "invalid-request")
        #expect(try unknown.object()["detail"] as? String == "Unknown member Z.")
        // A media type with parameters and in any case is still JSON; another one is not.
        for (type, status) in [("Application/JSON; charset=utf-8", 201), ("application/jsonx", 415)] {
            let typed = try api.server.connect(timeoutSeconds: 60).request(
                "POST", "/v1/lists/l/sessions", headers: [("Content-Type", type)], body: Array(#"{"limit":4}"#.utf8))
            #expect(typed.status == status, "\(type): \(typed.text)")
        }
    }

    @Test(
        "changes after writes apply cleanly in both formats and equal a fresh read", arguments: ["batch", "sequential"])
    func changesBothFormats(format: String) throws {
        let api = try APIFixture { $0.sessions.resetShare = 100 }
        defer { api.stop() }
        try api.put("l", listDocument(sections: 3, items: 8))
        let client = try SessionClient(api, list: "l", options: ["limit": 12, "format": format])
        try api.ops(
            "l",
            [
                ["op": "insertItems", "section": "sec-0", "items": [["id": "n1", "type": "row"]], "after": "s0-2"],
                ["op": "removeItems", "ids": ["s0-5"]],
                ["op": "moveItem", "id": "s1-1", "section": "sec-0", "before": "s0-0"],
                ["op": "updateItems", "items": [["id": "s0-3", "type": "row", "data": ["edited": true]]]],
                ["op": "updateSection", "id": "sec-0", "header": ["type": "header", "data": ["title": "new"]]],
            ])
        let answer = try client.sync()
        #expect(answer["changes"] != nil)
        #expect(answer["from"] as? Int == 1)
        #expect(answer["version"] as? Int == 2)
        #expect(client.window == (try api.freshWindow(ofSession: client.id)))
        #expect(client.window.sections[0].items.first?["id"]?.stringValue == "s1-1")
    }

    @Test("sessions opened at a list's head share its first window, each then moving on its own, a write giving anew")
    func sharedFirstWindow() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 2, items: 6))
        let first = try SessionClient(api, list: "l", options: ["limit": 4])
        let second = try SessionClient(api, list: "l", options: ["limit": 4])
        #expect(first.id != second.id)
        #expect(first.window == second.window)
        #expect(first.window.itemIDs == ["s0-0", "s0-1", "s0-2", "s0-3"])
        try first.sync("&extend=next&limit=3")
        #expect(first.window.itemIDs == ["s0-0", "s0-1", "s0-2", "s0-3", "s0-4", "s0-5", "s1-0"])
        // The other session's window did not move with it.
        #expect(try api.freshWindow(ofSession: second.id).itemIDs == ["s0-0", "s0-1", "s0-2", "s0-3"])
        try second.sync("&extend=next&limit=1")
        #expect(second.window.itemIDs == ["s0-0", "s0-1", "s0-2", "s0-3", "s0-4"])
        // Another page size is another window; a write makes the head's window anew.
        let longer = try SessionClient(api, list: "l", options: ["limit": 5])
        #expect(longer.window.itemIDs == ["s0-0", "s0-1", "s0-2", "s0-3", "s0-4"])
        try api.ops("l", [["op": "removeItems", "ids": ["s0-1"]]])
        let after = try SessionClient(api, list: "l", options: ["limit": 4])
        #expect(after.version == 2)
        #expect(after.window.itemIDs == ["s0-0", "s0-2", "s0-3", "s0-4"])
        #expect(after.window == (try api.freshWindow(ofSession: after.id)))
    }

    @Test("extend next and prev grow the window by limit, without duplicates or gaps")
    func extend() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 2, items: 10))
        let client = try SessionClient(api, list: "l", options: ["limit": 3, "around": "s1-5"])
        try client.sync("&extend=next&limit=4")
        #expect(client.window.itemIDs == ["s1-4", "s1-5", "s1-6", "s1-7", "s1-8", "s1-9"])
        #expect(!client.hasNext)
        try client.sync("&extend=prev")  // the session's own limit, 3
        #expect(client.window.itemIDs == ["s1-1", "s1-2", "s1-3", "s1-4", "s1-5", "s1-6", "s1-7", "s1-8", "s1-9"])
        try client.sync("&extend=prev&limit=5")
        #expect(client.window.itemIDs.first == "s0-6")
        #expect(client.window == (try api.freshWindow(ofSession: client.id)))
        #expect(
            try api.call("GET", "/v1/sessions/\(client.id)/changes?since=\(client.version)&extend=sideways").status
                == 400)
    }

    @Test("a retried since is answered again with the same changes (and a new seq); an unknown since is 409")
    func retriedSince() throws {
        let api = try APIFixture { $0.sessions.resetShare = 100 }
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 10))
        let client = try SessionClient(api, list: "l", options: ["limit": 5])
        try api.ops("l", [["op": "removeItems", "ids": ["s0-1"]]])
        let first = try api.call("GET", "/v1/sessions/\(client.id)/changes?since=1")
        let retry = try api.call("GET", "/v1/sessions/\(client.id)/changes?since=1")  // the first answer was lost
        #expect(first.status == 200)
        // The same answer, under a new seq (a seq is never given to two windows).
        #expect(try retry.object()["seq"] as? Int == 3)
        #expect(try first.object()["seq"] as? Int == 2)
        #expect(retry.text.replacing(#""seq":3"#, with: #""seq":2"#) == first.text)
        _ = try client.apply(retry)
        #expect(client.version == 2)
        #expect(try api.call("GET", "/v1/sessions/\(client.id)/changes?since=2").status == 200)
        let stale = try api.call("GET", "/v1/sessions/\(client.id)/changes?since=7")
        #expect(stale.status == 409)
        #expect(try stale.problemSlug() == "since-mismatch")
        #expect(try stale.object()["version"] as? Int == 2)
        for since in ["", "0", "x", "-1"] {
            #expect(
                try api.call("GET", "/v1/sessions/\(client.id)/changes?since=\(since)").problemSlug()
                    == "invalid-request")
        }
    }

    @Test("large changes come as a reset, applied as reloadData")
    func reset() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 10))
        let client = try SessionClient(api, list: "l", options: ["limit": 5])
        try api.put("l", listDocument(sections: 1, items: 10, prefix: "other-"))
        let answer = try client.sync()
        #expect(answer["reset"] != nil)
        #expect(answer["changes"] == nil)
        #expect(client.window.itemIDs == ["other-s0-0", "other-s0-1", "other-s0-2", "other-s0-3", "other-s0-4"])
        let pulled = try api.call("POST", "/v1/sessions/\(client.id)/reset", json: ["limit": 2])
        #expect(pulled.status == 200)
        _ = try client.apply(pulled)
        #expect(client.window.itemIDs == ["other-s0-0", "other-s0-1"])
        #expect(try api.call("POST", "/v1/sessions/\(client.id)/reset").status == 200)
    }

    @Test("expand and collapse send the children as inserts and deletes")
    func expandCollapse() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 6, childrenEvery: 2))
        let client = try SessionClient(api, list: "l", options: ["limit": 4])
        _ = try client.apply(
            try api.call("POST", "/v1/sessions/\(client.id)/expand", json: ["since": client.version, "id": "s0-2"]))
        #expect(client.window.itemIDs == ["s0-0", "s0-1", "s0-2", "s0-2-c0", "s0-2-c1", "s0-3"])
        _ = try client.apply(
            try api.call("POST", "/v1/sessions/\(client.id)/collapse", json: ["since": client.version, "id": "s0-2"]))
        #expect(client.window.itemIDs == ["s0-0", "s0-1", "s0-2", "s0-3"])
        #expect(
            try api.call("POST", "/v1/sessions/\(client.id)/expand", json: ["since": 99, "id": "s0-2"]).status == 409)
        #expect(try api.call("POST", "/v1/sessions/\(client.id)/expand", json: ["id": "s0-2"]).status == 400)
    }

    @Test("DELETE ends a session; unknown ids are 404 session-not-found")
    func deleteSession() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3))
        let client = try SessionClient(api, list: "l")
        #expect(try api.call("DELETE", "/v1/sessions/\(client.id)").status == 204)
        #expect(try api.call("DELETE", "/v1/sessions/\(client.id)").problemSlug() == "session-not-found")
        #expect(try api.call("GET", "/v1/sessions/\(client.id)/changes?since=1").problemSlug() == "session-not-found")
        #expect(try api.call("GET", "/v1/sessions/nope/changes?since=1").problemSlug() == "session-not-found")
    }

    @Test("idle sessions expire; past the capacity the least recently used is evicted")
    func expiryAndEviction() throws {
        let api = try APIFixture {
            $0.sessions.capacity = 3
            $0.sessions.idleSeconds = 0.4
        }
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3))
        let clients = try (0..<3).map { _ in try SessionClient(api, list: "l") }
        try clients[0].sync()  // the oldest becomes the most recently used
        let fourth = try SessionClient(api, list: "l")
        #expect(
            try api.call("GET", "/v1/sessions/\(clients[1].id)/changes?since=1").problemSlug() == "session-not-found")
        #expect(try api.call("GET", "/v1/sessions/\(clients[0].id)/changes?since=1").status == 200)
        #expect(api.service.context.sessions.evictionCount == 1)
        sleep(milliseconds: 700)
        #expect(try api.call("GET", "/v1/sessions/\(fourth.id)/changes?since=1").problemSlug() == "session-not-found")
    }

    @Test("a long poll is woken by a write within milliseconds; another times out with no changes")
    func longPoll() throws {
        let api = try APIFixture { $0.sessions.resetShare = 100 }
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 5))
        let client = try SessionClient(api, list: "l")
        let clock = ContinuousClock()
        let start = clock.now
        let quiet = try api.call("GET", "/v1/sessions/\(client.id)/changes?since=1&wait=0.4")
        #expect(clock.now - start >= .milliseconds(380))
        #expect(try quiet.object()["version"] as? Int == 1)
        DetachedThread.start {
            while api.service.context.longPolls.count < 1 { sleep(milliseconds: 2) }
            sleep(milliseconds: 100)
            _ = try? api.ops("l", [["op": "removeItems", "ids": ["s0-0"]]])
        }
        let woken = clock.now
        let answer = try client.sync("&wait=20")
        let elapsed = clock.now - woken
        #expect(elapsed < .seconds(5))
        #expect(answer["version"] as? Int == 2)
        #expect(client.window.itemIDs == ["s0-1", "s0-2", "s0-3", "s0-4"])
    }

    @Test("past the waiter cap, a long poll gets 503 overloaded with Retry-After")
    func waiterCap() throws {
        let api = try APIFixture { $0.longPolls.maxWaiters = 1 }
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 5))
        let first = try SessionClient(api, list: "l")
        let second = try SessionClient(api, list: "l")
        let status = Mutex(0)
        let secondID = second.id
        DetachedThread.start {
            while api.service.context.longPolls.count < 1 { sleep(milliseconds: 2) }
            let refused = try? api.call("GET", "/v1/sessions/\(secondID)/changes?since=1&wait=5")
            status.withLock { $0 = refused?.status ?? -1 }
            #expect(refused?.headers["Retry-After"] != nil)
            _ = try? api.ops("l", [["op": "removeItems", "ids": ["s0-0"]]])
        }
        #expect(try api.call("GET", "/v1/sessions/\(first.id)/changes?since=1&wait=10").status == 200)
        #expect(status.withLock { $0 } == 503)
    }

    @Test("shutdown ends the sessions: a waiting long poll is answered 404 session-not-found")
    func shutdownAnswersWaiters() throws {
        let api = try APIFixture()
        try api.put("l", listDocument(sections: 1, items: 5))
        let client = try SessionClient(api, list: "l")
        DetachedThread.start {
            while api.service.context.longPolls.count < 1 { sleep(milliseconds: 2) }
            api.stop()
        }
        let response = try api.call("GET", "/v1/sessions/\(client.id)/changes?since=1&wait=30")
        #expect(response.status == 404)
        #expect(try response.problemSlug() == "session-not-found")
    }
}

@Suite("Session answers")
struct SessionAnswerTests {
    @Test(
        "a \"nothing new\" answer is sent from one prepared response per session state, never a stale one",
        arguments: ["batch", "sequential"])
    func unchangedAnswersArePreparedPerState(format: String) throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 10))
        let client = try SessionClient(api, list: "l", options: ["limit": 3, "format": format])
        let other = try SessionClient(api, list: "l", options: ["limit": 3, "format": format])
        func nothingNew(_ session: SessionClient, requestID: String? = nil) throws -> ClientResponse {
            let response = try api.call(
                "GET", "/v1/sessions/\(session.id)/changes?since=\(session.version)",
                headers: requestID.map { [("X-Request-Id", $0)] } ?? [])
            #expect(response.status == 200)
            #expect(response.headers["Cache-Control"] == "no-store")
            let answer = try response.object()
            #expect(answer["session"] as? String == session.id)
            #expect(answer["from"] as? Int == session.version && answer["version"] as? Int == session.version)
            #expect(answer["seq"] as? Int == answer["fromSeq"] as? Int)
            return response
        }
        // The same bytes each time, each session its own; a request's own id still comes back.
        let first = try nothingNew(client)
        #expect(try nothingNew(client).text == first.text)
        #expect(try nothingNew(client, requestID: "poll-7").headers["X-Request-Id"] == "poll-7")
        #expect(try nothingNew(other).text != first.text)
        // A write: the answer carries it; the next "nothing new" names the new version and seq.
        try api.ops("l", [["op": "updateItems", "items": [["id": "s0-1", "type": "row", "data": ["n": 1]]]]])
        let changed = try client.sync()
        #expect((changed["seq"] as? Int ?? 0) > (try first.object()["seq"] as? Int ?? 0))
        let afterWrite = try nothingNew(client)
        #expect(afterWrite.text != first.text)
        #expect(try afterWrite.object()["seq"] as? Int == changed["seq"] as? Int)
        // An extend moves the window (the list did not change): the window's ends are the new ones.
        let extended = try client.sync("&extend=next&limit=10")
        #expect(client.hasNext == false)
        let afterExtend = try nothingNew(client)
        #expect(try afterExtend.object()["seq"] as? Int == extended["seq"] as? Int)
        #expect((try afterExtend.object()["page"] as? [String: Any])?["hasNext"] as? Bool == false)
        #expect(client.window == (try api.freshWindow(ofSession: client.id)))
        // The other session, prepared before the write, is told of the write, not "nothing new".
        let stale = try api.call("GET", "/v1/sessions/\(other.id)/changes?since=\(other.version)").object()
        #expect((stale["version"] as? Int ?? 0) > other.version)
        _ = try other.sync()
        #expect(other.window == (try api.freshWindow(ofSession: other.id)))
    }

    /// A poll that names its position alone is answered from the prepared answer before its other items are read
    /// (`APIContext.changes`): a poll with any other item must still have it read, and refused or obeyed.
    @Test("the prepared \"nothing new\" answers a poll of its position alone; any other item is read and checked")
    func preparedAnswerOnlyForAPositionAlone() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 10))
        let client = try SessionClient(api, list: "l", options: ["limit": 3])
        let base = "/v1/sessions/\(client.id)/changes?"
        let bySince = try api.call("GET", base + "since=\(client.version)")
        #expect(bySince.status == 200)
        #expect(try api.call("GET", base + "since=\(client.version)").text == bySince.text)
        let seq = try #require(try bySince.object()["seq"] as? Int)
        #expect(try api.call("GET", base + "seq=\(seq)").text == bySince.text)
        for refused in [
            "since=\(client.version)&limit=0", "since=\(client.version)&extend=sideways",
            "since=\(client.version)&seq=\(seq)", "since=\(client.version)&wait=x", "since=0", "seq=0", "seq=-1",
            "since=\(1 << 53)", "since=x",
        ] {
            #expect(try api.call("GET", base + refused).problemSlug() == "invalid-request", "\(refused)")
        }
        #expect(try api.call("GET", base + "since=\(client.version + 1)").status == 409)
        let extended = try api.call("GET", base + "since=\(client.version)&extend=next&limit=2").object()
        #expect((extended["seq"] as? Int ?? 0) > seq)
        // The session moved on (the extend): its old position is a retry, answered anew, not "nothing new".
        let retried = try api.call("GET", base + "seq=\(seq)").object()
        let latest = try #require(retried["seq"] as? Int)
        #expect(latest > extended["seq"] as? Int ?? .max)
        let started = ContinuousClock.now
        let waited = try api.call("GET", base + "seq=\(latest)&wait=0.3")
        #expect(waited.status == 200)
        #expect(ContinuousClock.now - started >= .milliseconds(250), "a wait is obeyed: nothing new to tell")
        #expect(try api.call("GET", "/v1/sessions/\(client.id)x/changes?since=1").problemSlug() == "session-not-found")
    }

    @Test("an unchanged window is written exactly as an empty diff of it would be", arguments: ChangeFormat.allCases)
    func unchangedMatchesEmptyDiff(format: ChangeFormat) throws {
        let version = try ListVersion(
            document: JSONValue.object([
                "sections": [
                    ["id": "a", "items": [["id": "1", "type": "t"], ["id": "2", "type": "t"]]],
                    ["id": "b", "items": []],
                    ["id": "c", "items": [["id": "3", "type": "t"]]],
                ]
            ]))
        let window = version.firstPage(limit: 3)
        let session = Session(id: "s", list: "l", format: format, limit: 3, window: SessionWindow(window, of: version))
        let unchanged = try session.answer(since: 1, latest: version, change: .update, resetShare: 0.5)
        guard case .unchanged = unchanged.content else {
            Issue.record("expected the unchanged fast path")
            return
        }
        let computed = SessionAnswer(
            from: 1, fromSeq: 1, content: .changes(.full(window.changes(to: window))), session: session)
        #expect(ResponseBodies.answer(unchanged) == ResponseBodies.answer(computed))
    }
}

@Suite("Session flood")
struct SessionFloodTests {
    @Test("a flood of session creations evicts the oldest sessions instead of growing without bound")
    func flood() throws {
        let api = try APIFixture { $0.sessions.capacity = 50 }
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 10))
        let first = try SessionClient(api, list: "l")
        try concurrently(4) { _ in
            let connection = try api.server.connect()
            for _ in 0..<125 {
                let response = try connection.request(
                    "POST", "/v1/lists/l/sessions", headers: [("Content-Type", "application/json")],
                    body: Array("{}".utf8))
                #expect(response.status == 201)
            }
        }
        #expect(api.service.context.sessions.count == 50)
        #expect(api.service.context.sessions.evictionCount == 451)
        #expect(try api.call("GET", "/v1/sessions/\(first.id)/changes?since=1").problemSlug() == "session-not-found")
        #expect(try api.call("GET", "/metrics").text.contains("quire_sessions_evicted_total 451"))
    }
}
