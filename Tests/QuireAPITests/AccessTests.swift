import Foundation
import JWTKit
import QuireCore
import QuireHTTP
import Testing

@testable import QuireAPI
@testable import QuireAuth

/// Access per user (openapi.yaml) over HTTP, against a real service: scopes, the list index, sessions
/// bound to their subject, every kind of bad token, and long polls that end with their token.
@Suite("Access per user")
struct AccessTests {
    /// A service with HS256 tokens (and the JWKS file when given), a write token, and the lists
    /// `inbox-alice` and `inbox-bob` written with it.
    static func fixture(jwksFile: String? = nil, leeway: Double = 0) async throws -> APIFixture {
        let settings = TestTokens.settings(jwksFile: jwksFile, leeway: leeway)
        let keys = try await TokenKeys.load(settings)
        let api = try APIFixture(keys: keys) {
            $0.jwt = settings
            $0.writeToken = "writer"
        }
        for list in ["inbox-alice", "inbox-bob"] {
            try api.put(list, listDocument(sections: 1, items: 5, prefix: list), headers: bearer("writer"))
        }
        return api
    }

    /// Expects a `401 unauthorized` with `WWW-Authenticate: Bearer … error="invalid_token"`.
    static func expectUnauthorized(_ response: ClientResponse, _ comment: Comment? = nil) throws {
        #expect(response.status == 401, comment)
        #expect(try response.problemSlug() == "unauthorized", comment)
        #expect(response.headers["WWW-Authenticate"]?.contains(#"error="invalid_token""#) == true, comment)
    }

    @Test("Alice's token reads inbox-alice, gets 403 on inbox-bob, and sees only hers in GET /v1/lists")
    func scopes() async throws {
        let api = try await Self.fixture()
        defer { api.stop() }
        let alice = bearer(try await TestTokens.hs256(TestTokens.claims(scope: "read:inbox-alice write:drafts-*")))
        #expect(try api.call("GET", "/v1/lists/inbox-alice?limit=2", headers: alice).status == 200)
        let refused = try api.call("GET", "/v1/lists/inbox-bob", headers: alice)
        #expect(refused.status == 403)
        #expect(try refused.problemSlug() == "forbidden")
        #expect(try api.call("POST", "/v1/lists/inbox-bob/sessions", json: [:], headers: alice).status == 403)
        // A filter changes nothing to it (openapi.yaml): the list is not hers to read, filtered or not.
        let filter = ["field": "type", "eq": "row"]
        #expect(
            try api.call("POST", "/v1/lists/inbox-bob/sessions", json: ["filter": filter], headers: alice).status == 403
        )
        #expect(
            try api.call(
                "GET", "/v1/lists/inbox-bob?filter=%7B%22field%22%3A%22type%22%2C%22eq%22%3A%22row%22%7D",
                headers: alice
            )
            .status == 403)
        #expect(
            try api.call("POST", "/v1/lists/inbox-alice/sessions", json: ["filter": filter], headers: alice).status
                == 201)
        let index = try api.call("GET", "/v1/lists", headers: alice)
        let names = try (index.object()["lists"] as? [[String: Any]])?.compactMap { $0["list"] as? String }
        #expect(names == ["inbox-alice"])
        // The write token sees them all.
        let all = try api.call("GET", "/v1/lists", headers: bearer("writer")).object()["lists"] as? [[String: Any]]
        #expect(all?.count == 2)
        // Writes need write: on the list; a refused write changes nothing.
        let document = listDocument(sections: 1, items: 1)
        #expect(try api.call("PUT", "/v1/lists/inbox-alice", json: document, headers: alice).status == 403)
        #expect(api.service.registry.version(of: "inbox-alice")?.version == 1)
        #expect(try api.call("PUT", "/v1/lists/drafts-alice", json: document, headers: alice).status == 201)
        #expect(try api.call("DELETE", "/v1/lists/drafts-alice", headers: alice).status == 204)
        // Without a token: 401 on every /v1 route once tokens are configured; operations stay open.
        try Self.expectUnauthorized(try api.call("GET", "/v1/lists"))
        try Self.expectUnauthorized(try api.call("GET", "/v1/lists/inbox-alice"))
        #expect(try api.call("GET", "/healthz").status == 200)
        let metrics = try api.call("GET", "/metrics").text
        #expect(metrics.contains(#"quire_auth_denials_total{reason="forbidden"} 5"#))
        #expect(metrics.contains(#"quire_auth_denials_total{reason="invalid_token"} 2"#))
    }

    @Test("Bob cannot read, extend, expand, reset or delete Alice's session, even with its id: 404")
    func sessionsBelongToTheirSubject() async throws {
        let api = try await Self.fixture()
        defer { api.stop() }
        let alice = bearer(try await TestTokens.hs256(TestTokens.claims(sub: "alice", scope: "read:inbox-*")))
        let bob = bearer(try await TestTokens.hs256(TestTokens.claims(sub: "bob", scope: "read:*")))
        let created = try api.call("POST", "/v1/lists/inbox-alice/sessions", json: ["limit": 2], headers: alice)
        #expect(created.status == 201)
        let id = try #require(try created.object()["session"] as? String)
        #expect(api.service.context.sessions.session(id)?.subject == "alice")
        let requests: [(String, String, Any?)] = [
            ("GET", "/v1/sessions/\(id)/changes?since=1", nil),
            ("GET", "/v1/sessions/\(id)/changes?since=1&extend=next&limit=2", nil),
            ("GET", "/v1/sessions/\(id)/changes?since=1&wait=5", nil),
            ("POST", "/v1/sessions/\(id)/expand", ["since": 1, "id": "inbox-alices0-0"]),
            ("POST", "/v1/sessions/\(id)/collapse", ["since": 1, "id": "inbox-alices0-0"]),
            ("POST", "/v1/sessions/\(id)/reset", ["limit": 2]),
            ("DELETE", "/v1/sessions/\(id)", nil),
        ]
        for (method, target, body) in requests {
            for headers in [bob, bearer("writer")] {  // another subject, or none (the static token)
                let response = try api.call(method, target, json: body, headers: headers)
                #expect(response.status == 404, "\(method) \(target)")
                #expect(try response.problemSlug() == "session-not-found")
            }
            try Self.expectUnauthorized(try api.call(method, target, json: body), "\(method) \(target) without a token")
        }
        // Nothing changed for Alice: her window still answers from version 1, and she can delete it.
        let changes = try api.call("GET", "/v1/sessions/\(id)/changes?since=1&extend=next&limit=2", headers: alice)
        #expect(changes.status == 200)
        #expect(try api.call("DELETE", "/v1/sessions/\(id)", headers: alice).status == 204)
        let metrics = try api.call("GET", "/metrics").text
        #expect(metrics.contains(#"quire_auth_denials_total{reason="session_subject"} 14"#))
    }

    @Test(
        "bad tokens: expired, not yet valid, wrong issuer, audience or signature, alg none, algorithm confusion, truncated, garbage: 401"
    )
    func badTokens() async throws {
        let jwks = TestTokens.temporaryPath("jwks.json")
        defer { try? FileManager.default.removeItem(atPath: jwks) }
        let ecdsa = ES256PrivateKey()
        try TestTokens.writeJWKS(jwks, ecdsa: ["ec-1": ecdsa], rsa: true)
        let api = try await Self.fixture(jwksFile: jwks)
        defer { api.stop() }
        let claims = TestTokens.claims()
        // The three algorithms work.
        let good = [
            try await TestTokens.hs256(claims), try await TestTokens.rs256(claims),
            try await TestTokens.es256(claims, key: ecdsa, kid: "ec-1"),
        ]
        for token in good {
            #expect(try api.call("GET", "/v1/lists/inbox-alice", headers: bearer(token)).status == 200)
        }
        let valid = good[0]
        let parts = valid.split(separator: ".").map(String.init)
        func segment(_ json: String) -> String { TestTokens.base64URL(Data(json.utf8)) }
        let rsaPublicPEM = try TestTokens.rsaKey.publicKey.pemRepresentation
        let bad: [(String, String)] = [
            ("expired", try await TestTokens.hs256(TestTokens.claims(lifetime: -10))),
            ("not yet valid", try await TestTokens.hs256(TestTokens.claims(notBefore: 120))),
            ("wrong issuer", try await TestTokens.hs256(TestTokens.claims(issuer: "https://evil.test"))),
            ("no issuer", try await TestTokens.hs256(TestTokens.claims(issuer: nil))),
            ("wrong audience", try await TestTokens.hs256(TestTokens.claims(audience: "another-app"))),
            ("no sub", try await TestTokens.hs256(TestTokens.claims(sub: nil))),
            ("wrong signature", try await TestTokens.hs256(claims, secret: "another-secret-of-32-bytes-or-more!!")),
            ("RS256 under an unknown kid", try await TestTokens.rs256(claims, kid: "rsa-2")),
            ("ES256 of a key not in the JWKS", try await TestTokens.es256(claims, key: ES256PrivateKey(), kid: "ec-1")),
            ("alg none", segment(#"{"alg":"none","typ":"JWT"}"#) + "." + parts[1] + "."),
            ("alg none, signature kept", segment(#"{"alg":"none"}"#) + "." + parts[1] + "." + parts[2]),
            // Algorithm confusion: HS256 "signed" with the RSA public key as the HMAC secret, with and
            // without the RSA key's kid.
            ("HS256 with the RSA public key", try await TestTokens.hs256(claims, secret: rsaPublicPEM)),
            (
                "HS256 with the RSA public key, its kid",
                try await TestTokens.hs256(claims, secret: rsaPublicPEM, kid: "rsa-1")
            ),
            (
                "RS256 header on an HS256 signature",
                segment(#"{"alg":"RS256","kid":"rsa-1"}"#) + "." + parts[1] + "." + parts[2]
            ),
            ("truncated", String(valid.dropLast(5))),
            ("two parts", parts[0] + "." + parts[1]),
            (
                "payload edited",
                parts[0] + "." + segment(#"{"sub":"mallory","exp":9999999999,"scope":"read:*"}"#) + "." + parts[2]
            ),
            ("garbage", "not-a-token"),
            ("dots", "...."),
            ("empty", ""),
        ]
        for (name, token) in bad {
            let response = try api.call("GET", "/v1/lists/inbox-alice", headers: [("Authorization", "Bearer \(token)")])
            try Self.expectUnauthorized(response, "\(name)")
        }
        #expect(try api.call("GET", "/v1/lists", headers: [("Authorization", "Basic YWxpY2U6eA==")]).status == 401)
        let metrics = try api.call("GET", "/metrics").text
        #expect(metrics.contains(#"quire_auth_denials_total{reason="expired"} 1"#))
    }

    @Test("the bearer scheme in any case of its letters; another scheme, or none, is no token")
    func bearerScheme() async throws {
        let api = try await Self.fixture()
        defer { api.stop() }
        let token = try await TestTokens.hs256(TestTokens.claims())
        for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
            let response = try api.call(
                "GET", "/v1/lists/inbox-alice", headers: [("Authorization", "\(scheme) \(token)")])
            #expect(response.status == 200, "\(scheme)")
        }
        for field in ["Bearer\t\(token)", "Bearerx\(token)", "Bearer ", "Bearer", "Bearr \(token)", "Token \(token)"] {
            let response = try api.call("GET", "/v1/lists/inbox-alice", headers: [("Authorization", field)])
            try Self.expectUnauthorized(response, "\(field)")
        }
    }

    @Test("a long poll whose token expires ends then, with 401")
    func longPollEndsWithItsToken() async throws {
        let api = try await Self.fixture()
        defer { api.stop() }
        let token = bearer(try await TestTokens.hs256(TestTokens.claims(lifetime: 1.5)))
        let created = try api.call("POST", "/v1/lists/inbox-alice/sessions", json: ["limit": 2], headers: token)
        let id = try #require(try created.object()["session"] as? String)
        let start = Date()
        let response = try api.call("GET", "/v1/sessions/\(id)/changes?since=1&wait=20", headers: token)
        let elapsed = Date().timeIntervalSince(start)
        try Self.expectUnauthorized(response)
        #expect(elapsed < 5, "the poll ended \(elapsed) s later")
        // A token that outlives the wait: the poll times out as usual.
        let long = bearer(try await TestTokens.hs256(TestTokens.claims(lifetime: 300)))
        let session = try api.call("POST", "/v1/lists/inbox-alice/sessions", json: ["limit": 2], headers: long)
        let other = try #require(try session.object()["session"] as? String)
        #expect(try api.call("GET", "/v1/sessions/\(other)/changes?since=1&wait=0.2", headers: long).status == 200)
    }

    @Test("static tokens keep working beside JWT; a read token cannot write")
    func staticTokens() async throws {
        let settings = TestTokens.settings()
        let api = try APIFixture(keys: try await TokenKeys.load(settings)) {
            $0.jwt = settings
            $0.writeToken = "writer"
            $0.readToken = "reader"
        }
        defer { api.stop() }
        try api.put("l", listDocument(sections: 1, items: 3), headers: bearer("writer"))
        #expect(try api.call("GET", "/v1/lists/l", headers: bearer("reader")).status == 200)
        let write = try api.call(
            "PUT", "/v1/lists/l", json: listDocument(sections: 1, items: 1), headers: bearer("reader"))
        try Self.expectUnauthorized(write)
    }
}
