import Foundation
import QuireCore
import QuireHTTP
import QuireStore
import QuireTesting
import Testing

@testable import QuireAPI

/// What `/metrics` says of the store and of the configured bounds.
@Suite("Store metrics")
struct StoreMetricsTests {
    @Test("/metrics: the SQLite journal's backlog grows with journaled writes and falls when they are applied")
    func journalBacklog() throws {
        let path = TestTokens.temporaryPath("journal.sqlite")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let api = try APIFixture(store: try SQLiteListStore(path: path, journalLimit: 8))
        defer { api.stop() }
        func gauge(_ name: String) throws -> Int {
            let text = try api.call("GET", "/metrics").text
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("\(name) ") })
            return Int(try #require(Double(line.split(separator: " ")[1])))  // gauges are written as decimals
        }
        #expect(try gauge("quire_store_journal_entries") == 0)
        try api.put("l", listDocument(sections: 1, items: 3))
        for index in 0..<4 {
            try api.ops(
                "l", [["op": "insertItems", "section": "sec-0", "items": [["id": "n\(index)", "type": "row"]]]])
        }
        #expect(try gauge("quire_store_journal_entries") == 5)
        #expect(try gauge("quire_store_journal_bytes") > 0)
        for index in 4..<8 {
            try api.ops(
                "l", [["op": "insertItems", "section": "sec-0", "items": [["id": "n\(index)", "type": "row"]]]])
        }
        #expect(try gauge("quire_store_journal_entries") < 8, "past the limit a commit applies the journal")
    }

    @Test("/metrics: each configured bound beside its gauge")
    func configuredBounds() throws {
        let api = try APIFixture {
            $0.lists.memoryBytes = 1 << 20
            $0.sessions.capacity = 7
            $0.longPolls.maxWaiters = 8
            $0.events.maxStreams = 9
            $0.http.connectionLimit = 10
        }
        defer { api.stop() }
        let text = try api.call("GET", "/metrics").text
        for line in [
            "quire_lists_memory_budget_bytes 1048576", "quire_sessions_capacity 7", "quire_long_polls_limit 8",
            "quire_event_streams_limit 9", "quire_http_connections_limit 10", "quire_store_journal_limit_entries 0",
            "quire_store_journal_entries 0", "quire_store_writes_queued 0",
        ] {
            #expect(text.contains("\n\(line)"), "\(line)")
        }
    }
}
