import Foundation
import QuireCore
import QuireHTTP
import QuireTesting
import Testing

@testable import QuireAPI
@testable import QuireAuth

/// Producers' endpoints (openapi.yaml) over HTTP: every status and problem type, and that a refused
/// write changes nothing.
@Suite("Producers: PUT, ops, GET and DELETE lists")
struct ProducerTests {
    @Test("PUT creates (201) then replaces (200), with ETag; GET /v1/lists lists it")
    func putAndList() throws {
        let api = try APIFixture()
        defer { api.stop() }
        let created = try api.call(
            "PUT", "/v1/lists/inbox", json: listDocument(sections: 2, items: 3, childrenEvery: 2))
        #expect(created.status == 201)
        #expect(created.headers["ETag"] == "\"1\"")
        #expect(try created.object()["list"] as? String == "inbox")
        #expect(try created.object()["version"] as? Int == 1)
        let replaced = try api.call("PUT", "/v1/lists/inbox", json: listDocument(sections: 1, items: 5))
        #expect(replaced.status == 200)
        #expect(replaced.headers["ETag"] == "\"2\"")
        try api.put("another", listDocument(sections: 1, items: 1))
        let index = try api.call("GET", "/v1/lists").object()["lists"] as? [[String: Any]]
        #expect(index?.map { $0["list"] as? String } == ["another", "inbox"])
        #expect(index?.last?["version"] as? Int == 2)
        #expect(index?.last?["sections"] as? Int == 1)
        #expect(index?.last?["items"] as? Int == 5)
    }

    @Test("If-Match: the current version writes, a stale one is 412 version-mismatch and changes nothing")
    func ifMatch() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 2))
        let stale = try api.call(
            "PUT", "/v1/lists/l", json: listDocument(sections: 1, items: 9), headers: [("If-Match", "\"7\"")])
        #expect(stale.status == 412)
        #expect(try stale.problemSlug() == "version-mismatch")
        #expect(try stale.object()["version"] as? Int == 1)
        #expect(api.listIDs("l") == ["s0-0", "s0-1"])
        let fresh = try api.call(
            "PUT", "/v1/lists/l", json: listDocument(sections: 1, items: 1), headers: [("If-Match", "\"1\"")])
        #expect(fresh.status == 200)
        let missing = try api.call(
            "PUT", "/v1/lists/new", json: listDocument(sections: 1, items: 1), headers: [("If-Match", "*")])
        #expect(missing.status == 412)
        // No tag names a list that does not exist, not even "0" (the version a 412 names for it).
        let zero = try api.call(
            "PUT", "/v1/lists/new", json: listDocument(sections: 1, items: 1), headers: [("If-Match", "\"0\"")])
        #expect(zero.status == 412)
        #expect(try zero.object()["version"] as? Int == 0)
        #expect(try api.call("GET", "/v1/lists/new").status == 404)
        #expect(
            try api.call(
                "POST", "/v1/lists/l/ops", json: ["ops": [["op": "removeItems", "ids": ["s0-0"]]]],
                headers: [("If-Match", "\"1\"")]
            ).status == 412)
        #expect(
            try api.call(
                "PUT", "/v1/lists/l", json: listDocument(sections: 1, items: 1), headers: [("If-Match", "seven")]
            ).status == 400)
    }

    @Test("invalid lists are 422 invalid-list naming the path; nothing is stored")
    func invalidList() throws {
        let api = try APIFixture()
        defer { api.stop() }
        var document = listDocument(sections: 3, items: 20)
        var sections = document["sections"] as! [[String: Any]]
        var items = sections[2]["items"] as! [[String: Any]]
        items[17]["id"] = "s2-3"
        sections[2]["items"] = items
        document["sections"] = sections
        let duplicate = try api.call("PUT", "/v1/lists/bad", json: document)
        #expect(duplicate.status == 422)
        #expect(try duplicate.problemSlug() == "invalid-list")
        // An id with NUL in it: no store could keep it (PostgreSQL refuses it in text).
        let nul = try api.call(
            "PUT", "/v1/lists/bad", json: ["sections": [["id": "s", "items": [["id": "a\u{0}b", "type": "t"]]]]])
        #expect(nul.status == 422)
        #expect(try nul.problemSlug() == "invalid-list")
        #expect(try nul.object()["path"] as? String == "sections[0].items[0].id")
        #expect(try duplicate.object()["path"] as? String == "sections[2].items[17].id")
        let missingType = try api.call(
            "PUT", "/v1/lists/bad", json: ["sections": [["id": "a", "items": [["id": "x"]]]]])
        #expect(try missingType.object()["path"] as? String == "sections[0].items[0].type")
        let unknown = try api.call("PUT", "/v1/lists/bad", json: ["sections": [], "extra": 1])
        #expect(unknown.status == 422)
        #expect(try unknown.object()["path"] as? String == "extra")
        let notObject = try api.call("PUT", "/v1/lists/bad", json: [1, 2])
        #expect(notObject.status == 422)
        #expect(api.service.registry.version(of: "bad") == nil)
    }

    @Test("malformed requests: 400 invalid-json, 415, 400 invalid-request")
    func malformed() throws {
        let api = try APIFixture()
        defer { api.stop() }
        let connection = try api.server.connect()
        let broken = try connection.request(
            "PUT", "/v1/lists/x", headers: [("Content-Type", "application/json")], body: Array("{\"sections\": [".utf8))
        #expect(broken.status == 400)
        #expect(try broken.problemSlug() == "invalid-json")
        let empty = try connection.request(
            "PUT", "/v1/lists/x", headers: [("Content-Type", "application/json")], body: [])
        #expect(try empty.problemSlug() == "invalid-json")
        let form = try connection.request(
            "PUT", "/v1/lists/x", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("a=b".utf8))
        #expect(form.status == 415)
        #expect(try form.problemSlug() == "unsupported-media-type")
        let charset = try connection.request(
            "PUT", "/v1/lists/x", headers: [("Content-Type", "application/json; charset=utf-8")],
            body: Array(#"{"sections":[]}"#.utf8))
        #expect(charset.status == 201)
        let badName = try api.call("PUT", "/v1/lists/bad%20name", json: listDocument(sections: 1, items: 1))
        #expect(badName.status == 400)
        #expect(try badName.problemSlug() == "invalid-request")
        let tooLong = try api.call("GET", "/v1/lists/" + String(repeating: "a", count: 129))
        #expect(tooLong.status == 400)
    }

    @Test("ops apply whole or not at all: 422 invalid-op names the op index")
    func ops() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("l", listDocument(sections: 2, items: 3))
        let version = try api.ops(
            "l",
            [
                ["op": "insertItems", "section": "sec-0", "items": [["id": "new", "type": "row"]], "after": "s0-0"],
                ["op": "moveItem", "id": "s1-2", "section": "sec-0", "before": "s0-0"],
            ])
        #expect(version == 2)
        #expect(api.listIDs("l") == ["s1-2", "s0-0", "new", "s0-1", "s0-2", "s1-0", "s1-1"])
        let failing = try api.call(
            "POST", "/v1/lists/l/ops",
            json: [
                "ops": [
                    ["op": "removeItems", "ids": ["s0-0"]],
                    ["op": "moveItem", "id": "nope", "section": "sec-1"],
                ]
            ])
        #expect(failing.status == 422)
        #expect(try failing.problemSlug() == "invalid-op")
        #expect(try failing.object()["opIndex"] as? Int == 1)
        #expect(api.listIDs("l").contains("s0-0"), "the first op of a refused batch must not apply")
        #expect(api.service.registry.version(of: "l")?.version == 2)
        let empty = try api.call("POST", "/v1/lists/l/ops", json: ["ops": []])
        #expect(empty.status == 422)
        #expect(try empty.object()["opIndex"] == nil)
        let unknownOp = try api.call("POST", "/v1/lists/l/ops", json: ["ops": [["op": "explode"]]])
        #expect(try unknownOp.object()["opIndex"] as? Int == 0)
        let missingList = try api.call(
            "POST", "/v1/lists/ghost/ops", json: ["ops": [["op": "removeItems", "ids": ["a"]]]])
        #expect(missingList.status == 404)
        #expect(try missingList.problemSlug() == "list-not-found")
        // The order of checks: the list's existence (404) and If-Match (412) before the ops' content (422).
        #expect(try api.call("POST", "/v1/lists/ghost/ops", json: ["ops": []]).problemSlug() == "list-not-found")
        #expect(
            try api.call("POST", "/v1/lists/ghost/ops", json: ["ops": [], "x": 1]).problemSlug() == "list-not-found")
        let staleAndEmpty = try api.call(
            "POST", "/v1/lists/l/ops", json: ["ops": []], headers: [("If-Match", "\"1\"")])
        #expect(try staleAndEmpty.problemSlug() == "version-mismatch")
    }

    @Test("DELETE: 204, then the list and its sessions are gone")
    func delete() throws {
        let api = try APIFixture()
        defer { api.stop() }
        try api.put("gone", listDocument(sections: 1, items: 3))
        let session = try SessionClient(api, list: "gone")
        #expect(try api.call("DELETE", "/v1/lists/gone").status == 204)
        #expect(try api.call("GET", "/v1/lists/gone").problemSlug() == "list-not-found")
        #expect(try api.call("DELETE", "/v1/lists/gone").status == 404)
        let changes = try api.call("GET", "/v1/sessions/\(session.id)/changes?since=1")
        #expect(changes.status == 404)
        #expect(try changes.problemSlug() == "session-not-found")
        // The name can be created again; its versions go on from the deleted list's (PageTests: why).
        #expect(try api.put("gone", listDocument(sections: 1, items: 1)) == 2)
    }

    @Test("with a write token: writes need it (401 + WWW-Authenticate), reads do not")
    func writeToken() throws {
        let api = try APIFixture { $0.writeToken = "s3cret" }
        defer { api.stop() }
        let document = listDocument(sections: 1, items: 2)
        for headers in [[], [("Authorization", "Bearer wrong")], [("Authorization", "Basic s3cret")]] {
            let refused = try api.call("PUT", "/v1/lists/l", json: document, headers: headers)
            #expect(refused.status == 401)
            #expect(try refused.problemSlug() == "unauthorized")
            #expect(refused.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
        }
        #expect(api.service.registry.version(of: "l") == nil)
        try api.put("l", document, headers: [("Authorization", "Bearer s3cret")])
        #expect(try api.call("DELETE", "/v1/lists/l").status == 401)
        #expect(try api.call("POST", "/v1/lists/l/ops", json: ["ops": []]).status == 401)
        #expect(try api.call("GET", "/v1/lists/l").status == 200)
        #expect(try api.call("POST", "/v1/lists/l/sessions").status == 201)
        func equal(_ given: String, _ expected: String) -> Bool {
            Array(given.utf8).withUnsafeBytes { AccessControl.constantTimeEqual($0, Array(expected.utf8)) }
        }
        #expect(equal("abc", "abc"))
        #expect(!equal("abcd", "abc"))
        #expect(!equal("ab", "abc"))
        #expect(!equal("", "abc"))
    }

    @Test("with a read token: every /v1 route needs it (or the write token); operations endpoints do not")
    func readToken() throws {
        let api = try APIFixture {
            $0.writeToken = "writer"
            $0.readToken = "reader"
        }
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3), headers: [("Authorization", "Bearer writer")])
        for target in ["/v1/lists", "/v1/lists/l"] {
            let refused = try api.call("GET", target)
            #expect(refused.status == 401)
            #expect(try refused.problemSlug() == "unauthorized")
            #expect(try api.call("GET", target, headers: [("Authorization", "Bearer reader")]).status == 200)
            #expect(try api.call("GET", target, headers: [("Authorization", "Bearer writer")]).status == 200)
            #expect(try api.call("GET", target, headers: [("Authorization", "Bearer nope")]).status == 401)
        }
        #expect(try api.call("POST", "/v1/lists/l/sessions").status == 401)
        let session = try api.call("POST", "/v1/lists/l/sessions", headers: [("Authorization", "Bearer reader")])
        #expect(session.status == 201)
        let id = try session.object()["session"] as! String
        #expect(try api.call("GET", "/v1/sessions/\(id)/changes?since=1").status == 401)
        #expect(
            try api.call("GET", "/v1/sessions/\(id)/changes?since=1", headers: [("Authorization", "Bearer reader")])
                .status
                == 200)
        #expect(
            try api.call("PUT", "/v1/lists/l", json: ["sections": []], headers: [("Authorization", "Bearer reader")])
                .status == 401)
        for target in ["/healthz", "/readyz", "/metrics", "/openapi.yaml"] {
            #expect(try api.call("GET", target).status == 200)
        }
    }
}
