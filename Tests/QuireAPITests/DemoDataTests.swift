import QuireCore
import Testing

@testable import QuireAPI

/// The demo list and its live changes (`demo.live`), which `/demo` shows.
@Suite("Demo data")
struct DemoDataTests {
    func seeded() throws -> ListRegistry {
        let registry = ListRegistry(store: InMemoryListStore(), limits: ListLimits())
        try DemoData.seedIfMissing(registry)
        return registry
    }

    func firstSection(_ registry: ListRegistry) throws -> [String] {
        let version = try #require(registry.version(of: DemoData.listName))
        return version.firstPage(limit: 60).itemIDs
    }

    @Test("a live change is one write: a message on top, an edit, every other time a move, old messages removed")
    func liveChanges() throws {
        let registry = try seeded()
        let start = try #require(registry.version(of: DemoData.listName)).version
        var orders: [[String]] = [try firstSection(registry)]
        for tick in 1...8 {
            try DemoData.liveChange(registry, tick: tick)
            orders.append(try firstSection(registry))
        }
        #expect(try #require(registry.version(of: DemoData.listName)).version == start + 8)
        #expect(orders.last!.filter { $0.hasPrefix("live-") }.count == 3, "the last three live messages stay")
        #expect(orders.last!.prefix(3) == ["live-\(start + 7)-8", "live-\(start + 6)-7", "live-\(start + 5)-6"])
        // A tick that moves: the seeded messages (live ones aside) are in another order than before it.
        let seededOrder = orders.map { $0.filter { !$0.hasPrefix("live-") } }
        #expect((1..<seededOrder.count).contains { seededOrder[$0] != seededOrder[$0 - 1] })
    }

    @Test("an op naming a row a visitor removed is left out: the rest of the change still happens")
    func survivesRemovedRows() throws {
        let registry = try seeded()
        _ = try registry.write(DemoData.listName, mustExist: true) { previous throws(ListRegistry.WriteError) in
            do throws(OpError) {
                return try previous!.applying(opsDocument: ["ops": [["op": "removeItems", "ids": ["m-1", "m-2"]]]])
            } catch {
                throw .invalidOp(error)
            }
        }
        let before = try #require(registry.version(of: DemoData.listName)).version
        for tick in 1...4 { try DemoData.liveChange(registry, tick: tick) }
        #expect(try #require(registry.version(of: DemoData.listName)).version == before + 4)
        #expect(try firstSection(registry).filter { $0.hasPrefix("live-") }.count == 3)
    }
}
