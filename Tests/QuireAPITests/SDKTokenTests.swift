import Foundation
import OpenAPIAsyncHTTPClient
import QuireClient
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

@testable import QuireAPI
@testable import QuireAuth

/// The SDK's token refresh (issue 11) and its choice of channel, against a real server on port 0.
extension SDKTests {
    /// A service with HS256 tokens and the list `feed`.
    static func tokenFixture() async throws -> APIFixture {
        let settings = TestTokens.settings()
        let keys = try await TokenKeys.load(settings)
        let fixture = try APIFixture(keys: keys) {
            $0.jwt = settings
            $0.writeToken = "writer"
        }
        try fixture.put("feed", listDocument(sections: 1, items: 50), headers: bearer("writer"))
        return fixture
    }

    @Test("a refused token is replaced by the closure's next one, and the request sent once more")
    func tokenClosureAfter401() async throws {
        let fixture = try await Self.tokenFixture()
        defer { fixture.stop() }
        let good = try await TestTokens.hs256(TestTokens.claims(scope: "read:feed", lifetime: 600))
        let calls = Mutex(0)
        let client = QuireClient(
            baseURL: URL(string: "http://127.0.0.1:\(fixture.server.port)")!,
            token: {
                calls.withLock { count in
                    count += 1
                    return count == 1 ? "not-a-token" : good
                }
            })
        let session = client.session(list: "feed", options: QuireSession.Options(limit: 10, transport: .longPolls))
        try await session.open()
        #expect(calls.withLock { $0 } == 2, "the first token, then the one after the 401")
        #expect(await session.window.itemIDs.count == 10)
        try await session.loadNext()
        #expect(await session.window.itemIDs.count == 20)
        #expect(calls.withLock { $0 } == 2, "a good token is kept")
        await session.close()
    }

    @Test("an expired JSON Web Token mid-session: the refresh closure's new token, the session goes on")
    func expiredTokenMidSession() async throws {
        let fixture = try await Self.tokenFixture()
        defer { fixture.stop() }
        let short = try await TestTokens.hs256(TestTokens.claims(scope: "read:feed", lifetime: 2))
        let refreshes = Mutex(0)
        let client = QuireClient(
            baseURL: URL(string: "http://127.0.0.1:\(fixture.server.port)")!, token: short,
            refresh: {
                refreshes.withLock { $0 += 1 }
                return try await TestTokens.hs256(TestTokens.claims(scope: "read:feed", lifetime: 600))
            })
        let session = client.session(
            list: "feed", options: QuireSession.Options(limit: 10, transport: .longPolls, longPollWait: 1))
        try await session.open()
        let id = try #require(await session.sessionID)
        try await Task.sleep(for: .seconds(3.5))  // the first token has expired
        try await session.loadNext()
        #expect(await session.window.itemIDs.count == 20)
        #expect(refreshes.withLock { $0 } >= 1)
        #expect(await session.sessionID == id, "the same session: the new token has the same subject")
        #expect(await session.statistics.sessionsOpened == 1)
        let write = try fixture.call(
            "POST", "/v1/lists/feed/ops", json: ["ops": [["op": "removeItems", "ids": ["s0-3"]]]],
            headers: bearer("writer"))
        #expect(write.status == 200)
        try await Self.converge(session, fixture)
        #expect(await session.window == (try fixture.freshWindow(ofSession: id)))
        await session.close()
    }

    @Test("an event stream ended by its token's expiry reconnects with the refresh closure's token")
    func expiredTokenOnTheStream() async throws {
        let fixture = try await Self.tokenFixture()
        defer { fixture.stop() }
        let short = try await TestTokens.hs256(TestTokens.claims(scope: "read:feed", lifetime: 2))
        let refreshes = Mutex(0)
        let client = QuireClient(
            baseURL: URL(string: "http://127.0.0.1:\(fixture.server.port)")!, transport: AsyncHTTPClientTransport(),
            streamsResponses: true, token: short,
            refresh: {
                refreshes.withLock { $0 += 1 }
                return try await TestTokens.hs256(TestTokens.claims(scope: "read:feed", lifetime: 600))
            })
        let session = client.session(list: "feed", options: QuireSession.Options(limit: 10, transport: .events))
        try await session.open()
        let id = try #require(await session.sessionID)
        try await Task.sleep(for: .seconds(3.5))  // the stream has ended with its token; the next one is refreshed
        let write = try fixture.call(
            "POST", "/v1/lists/feed/ops", json: ["ops": [["op": "removeItems", "ids": ["s0-2"]]]],
            headers: bearer("writer"))
        #expect(write.status == 200)
        try await Self.converge(session, fixture)
        #expect(await session.window == (try fixture.freshWindow(ofSession: id)))
        #expect(refreshes.withLock { $0 } >= 1)
        let statistics = await session.statistics
        #expect(statistics.streams >= 2 && statistics.events >= 1 && statistics.longPolls == 0, "\(statistics)")
        await session.close()
    }

    @Test(
        "a filtered session under a token that names the list (read:feed): every request on it is the list's",
        arguments: [QuireSession.Options.Transport.events, .longPolls])
    func filteredSessionWithScopedToken(transport: QuireSession.Options.Transport) async throws {
        let fixture = try await Self.tokenFixture()
        defer { fixture.stop() }
        let token = try await TestTokens.hs256(TestTokens.claims(scope: "read:feed", lifetime: 600))
        let url = URL(string: "http://127.0.0.1:\(fixture.server.port)")!
        let client =
            transport == .events
            ? QuireClient(baseURL: url, transport: AsyncHTTPClientTransport(), streamsResponses: true, token: token)
            : QuireClient(baseURL: url, token: token)
        let even = QuireFilter.field("data.n").in((0..<25).map { .number(Double($0 * 2)) })
        let session = client.session(
            list: "feed", options: QuireSession.Options(limit: 5, filter: even, transport: transport, longPollWait: 2))
        try await session.open()
        #expect(await session.window.itemIDs == ["s0-0", "s0-2", "s0-4", "s0-6", "s0-8"])
        try await session.loadNext()  // a request on the session: the token reads the list, so it reads its view
        #expect(await session.window.itemIDs.count == 10)
        let write = try fixture.call(
            "POST", "/v1/lists/feed/ops", json: ["ops": [["op": "removeItems", "ids": ["s0-2", "s0-3"]]]],
            headers: bearer("writer"))
        #expect(write.status == 200)
        try await Self.converge(session, fixture)
        // With long polls, a poll already on its way when loadNext was made may cross it, and the extension is
        // then undone on both sides alike (QuireSession's follower says so): the window is the server's either
        // way, 9 or 4 items, the filter's.
        let id = try #require(await session.sessionID)
        #expect(await session.window == (try fixture.freshWindow(ofSession: id)))
        let shown = await session.window.itemIDs
        let expected = ["s0-0", "s0-4", "s0-6", "s0-8", "s0-10", "s0-12", "s0-14", "s0-16", "s0-18"]
        #expect(
            shown == expected || (transport == .longPolls && shown == Array(expected.prefix(4))),
            "\(shown)")
        #expect(await session.statistics.sessionsOpened == 1)
        await session.close()
    }

    @Test("URLSessionTransport on Linux buffers bodies: .automatic follows with long polls, .events is refused")
    func channelChoice() async throws {
        let fixture = try APIFixture()
        defer { fixture.stop() }
        try fixture.put("feed", listDocument(sections: 1, items: 20))
        let client = QuireClient(baseURL: URL(string: "http://127.0.0.1:\(fixture.server.port)")!)
        #if canImport(FoundationNetworking)
            #expect(client.streamsResponses == false)
            let refused = client.session(list: "feed", options: QuireSession.Options(transport: .events))
            await #expect(throws: QuireClientError.self) { try await refused.open() }
            let session = client.session(list: "feed", options: QuireSession.Options(limit: 5, longPollWait: 5))
            try await session.open()
            let id = try #require(await session.sessionID)
            try fixture.ops("feed", [["op": "removeItems", "ids": ["s0-1"]]])
            try await Self.converge(session, fixture)
            #expect(await session.window == (try fixture.freshWindow(ofSession: id)))
            let statistics = await session.statistics
            #expect(statistics.longPolls > 0 && statistics.streams == 0)
            await session.close()
        #else
            #expect(client.streamsResponses == true)
        #endif
    }
}
