import Synchronization
import Testing

@testable import QuireCore

@Suite("LRU table and session ids")
struct LRUTableTests {
    @Test("the least recently used entry is evicted past the capacity")
    func eviction() {
        var table = LRUTable<String, Int>(capacity: 3, idleTimeout: 1000)
        #expect(table.insert("a", 1, now: 0).evicted.isEmpty)
        _ = table.insert("b", 2, now: 1)
        _ = table.insert("c", 3, now: 2)
        let used = table.use("a", now: 3)  // a is now the most recent
        #expect(used == 1)
        let removed = table.insert("d", 4, now: 4)
        #expect(removed.evicted == [2])
        #expect(table.keysByRecency == ["d", "a", "c"])
        let evicted = table.use("b", now: 5)
        #expect(evicted == nil)
        #expect(table.count == 3)
    }

    @Test("modify changes a value in place and marks it used; an absent or idle key gives nil")
    func modify() {
        var table = LRUTable<String, Int>(capacity: 3, idleTimeout: 100)
        _ = table.insert("a", 1, now: 0)
        _ = table.insert("b", 2, now: 1)
        let doubled = table.modify("a", now: 2) { value -> Int in
            value *= 10
            return value
        }
        #expect(doubled == 10)
        #expect(table.use("a", now: 3) == 10)
        #expect(table.keysByRecency == ["a", "b"])
        let unchanged = table.modify("b", now: 4) { value in value == 99 }  // a body may leave it as it is
        #expect(unchanged == false)
        #expect(table.use("b", now: 5) == 2)
        #expect(table.modify("missing", now: 6) { _ in true } == nil)
        #expect(table.modify("a", now: 200) { _ in true } == nil)  // idle past the timeout: gone
        #expect(table.count == 1)
    }

    @Test("entries idle past the timeout are gone, on use and on sweep")
    func expiry() {
        var table = LRUTable<String, String>(capacity: 10, idleTimeout: 100)
        _ = table.insert("old", "o", now: 0)
        _ = table.insert("fresh", "f", now: 50)
        let old = table.use("old", now: 101)
        let fresh = table.use("fresh", now: 140)
        #expect(old == nil)
        #expect(fresh == "f")
        _ = table.insert("x", "x", now: 150)
        let early = table.sweep(now: 235)
        let late = table.sweep(now: 260)
        #expect(early.expired.isEmpty)
        #expect(late.expired == ["f", "x"])
        #expect(table.count == 0)
    }

    @Test("a clock read before another thread's use of the entry does not expire it (no wrap-around)")
    func olderClockIsNotIdleness() {
        var table = LRUTable<String, String>(capacity: 10, idleTimeout: 100)
        _ = table.insert("busy", "b", now: 1_000)
        _ = table.use("busy", now: 1_050)  // another request, stamped after this one read the clock
        // (A use keeps the later of the two stamps.)
        let late = table.use("busy", now: 1_040)
        #expect(late == "b")
        #expect(table.contains("busy", now: 1_030))
        #expect(table.sweep(now: 1_020).expired.isEmpty)
        #expect(table.count == 1)
        #expect(table.use("busy", now: 1_151) == nil)  // still expires once idle past the timeout
    }

    @Test("update, remove and removeAll keep the order consistent")
    func updates() {
        var table = LRUTable<String, Int>(capacity: 100, idleTimeout: .max)
        for index in 0..<50 { _ = table.insert("k\(index)", index, now: UInt64(index)) }
        let updated = table.modify("k0", now: 60) { $0 = 100 } != nil
        let updatedMissing = table.modify("missing", now: 60) { $0 = 1 } != nil
        #expect(updated)
        #expect(!updatedMissing)
        let k1 = table.remove("k1")
        #expect(k1 == 1)
        let removed = table.removeAll(where: { value in value % 2 == 0 })
        #expect(removed.count == 25)
        #expect(table.count == 24)
        #expect(table.keysByRecency.first == "k49")
        #expect(Set(table.keysByRecency).count == 24)
        for index in 0..<200 { _ = table.insert("n\(index)", index, now: 100 + UInt64(index)) }
        #expect(table.count == 100)
        #expect(table.keysByRecency.first == "n199")
        #expect(table.keysByRecency.last == "n100")
    }

    @Test("session ids: 22 URL-safe characters, 128 random bits, no repeats")
    func sessionIDs() {
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let id = SessionID.generate()
            #expect(SessionID.isWellFormed(id))
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
        // Every position but the last uses the whole alphabet over many draws (the bits are all random).
        let positions = (0..<21).map { position in Set(seen.map { Array($0.utf8)[position] }).count }
        #expect(positions.allSatisfy { $0 > 50 })
        #expect(!SessionID.isWellFormed("short"))
        #expect(!SessionID.isWellFormed(String(repeating: "*", count: 22)))
    }

    @Test("a cluster instance's session ids name it: <tag>_<22 characters>, and only such tags are taken")
    func taggedSessionIDs() {
        for tag in ["q1", "A", "instance16chars0"] {
            let id = SessionID.generate(instance: tag)
            #expect(id.hasPrefix(tag + "_") && id.utf8.count == tag.utf8.count + 23)
            #expect(SessionID.isWellFormed(id))
        }
        let random = SessionID.generate()
        #expect(SessionID.isWellFormed("q2_" + random))
        #expect(!SessionID.isWellFormed("q2-" + random), "a tag ends at an underscore")
        #expect(!SessionID.isWellFormed("q_2_" + random), "a tag has no underscore")
        #expect(!SessionID.isWellFormed("_" + random), "a tag is not empty")
        #expect(!SessionID.isWellFormed("instance17charsXX_" + random), "a tag has at most 16 characters")
        #expect(!SessionID.isWellFormed("q2_" + random.dropLast()))
        #expect(!SessionID.isWellFormed("q2_" + random + "A"))
        for bad in ["", "q-1", "q_1", "instance17charsXX", "é"] { #expect(!SessionID.isValidInstance(bad)) }
        #expect(SessionID.isValidInstance("q1") && SessionID.isValidInstance("Z9"))
    }

    @Test("a session id's random bits spread ids over the stripes as evenly as a hash, tagged or not")
    func randomBitsSpread() {
        for instance in [nil, "q1"] as [String?] {
            var stripes = [Int](repeating: 0, count: 16)
            var high = [Int](repeating: 0, count: 16)
            for _ in 0..<16_000 {
                let bits = SessionID.randomBits(SessionID.generate(instance: instance))
                #expect(bits < 1 << 60)
                stripes[Int(bits & 15)] += 1
                high[Int(bits >> 56)] += 1
            }
            #expect(stripes.allSatisfy { (750...1250).contains($0) }, "\(stripes)")
            #expect(high.allSatisfy { (750...1250).contains($0) }, "the first characters' bits too: \(high)")
        }
        #expect(SessionID.randomBits("") == 0 && SessionID.randomBits("x") == 0)
        #expect(SessionID.randomBits("AB") == 0, "the last character is left out: it carries 2 random bits")
        #expect(SessionID.randomBits("BAx") == 1 << 6, "each character is 6 bits, in order")
    }

    @Test("session keys are equal when their ids are, whatever their random bits say")
    func sessionKeys() {
        let id = SessionID.generate()
        #expect(SessionKey(id) == SessionKey(String(decoding: Array(id.utf8), as: UTF8.self)))
        #expect(SessionKey(id).hashValue == SessionKey(String(decoding: Array(id.utf8), as: UTF8.self)).hashValue)
        // The same 60 bits (the last 11 characters but the last alike), different ids: the first character changed
        // (an id that starts with "X" itself, one in 64, gets a "Y").
        let other = (id.hasPrefix("X") ? "Y" : "X") + id.dropFirst()
        #expect(SessionKey(other).bits == SessionKey(id).bits)
        #expect(SessionKey(other) != SessionKey(id))
        var table = LRUTable<SessionKey, Int>(capacity: 4, idleTimeout: .max)
        _ = table.insert(SessionKey(id), 1, now: 0)
        _ = table.insert(SessionKey(other), 2, now: 0)
        #expect(table.use(SessionKey(id), now: 1) == 1 && table.use(SessionKey(other), now: 1) == 2)
        // A validated key is the key of a well-formed id, and only of one.
        let tagged = SessionID.generate(instance: "q2")
        for text in [id, tagged, "", "x", String(id.dropLast()), id + "A", "q2-" + id, "_" + id, "é" + id.dropFirst()] {
            #expect((SessionKey(validating: text) != nil) == SessionID.isWellFormed(text), "\(text)")
            if let key = SessionKey(validating: text) {
                #expect(key == SessionKey(text) && key.bits == SessionKey(text).bits)
            }
        }
        #expect(SessionKey(validating: id) != nil && SessionKey(validating: tagged) != nil)
    }

    @Test(
        "a store of 4,096 sessions and more is striped: it keeps its capacity, whatever the stripes, evicts the stalest"
    )
    func stripedSessionStore() throws {
        let version = try ListVersion(document: ["sections": [["id": "s", "items": [["id": "1", "type": "t"]]]]])
        let window = SessionWindow(version.firstPage(limit: 1), of: version)
        let now = Atomic<UInt64>(0)
        let store = SessionStore(capacity: 4096, idleSeconds: 60) { now.add(1, ordering: .relaxed).newValue }
        func session(_ id: String, list: String = "a") -> Session {
            Session(id: id, list: list, format: .batch, limit: 1, window: window)
        }
        // Random ids fill the 16 stripes unevenly (256 each on average): none is evicted below the capacity.
        let first = (0..<4096).map { _ in SessionID.generate() }
        for id in first { store.insert(session(id)) }
        #expect(store.count == 4096 && store.evictionCount == 0)
        #expect(first.allSatisfy { store.contains($0) })
        // Another 4,096: one evicted for each, the first ones go, the new ones stay, whatever their stripes.
        let second = (0..<4096).map { _ in SessionID.generate() }
        for id in second { store.insert(session(id, list: "b")) }
        #expect(store.count == 4096 && store.evictionCount == 4096)
        #expect(first.filter { store.contains($0) }.count < 16 * 32)
        #expect(second.suffix(2048).allSatisfy { store.contains($0) })
        // Removals leave room: inserting again evicts nothing until the store is full again.
        for id in second.suffix(20).prefix(10) { #expect(store.remove(id)) }
        for _ in 0..<10 { store.insert(session(SessionID.generate(), list: "b")) }
        #expect(store.count == 4096 && store.evictionCount == 4096)
        // A list's sessions are removed from every stripe; an update is checked within its stripe.
        let kept = second.last!
        let stored = try #require(store.session(kept))
        #expect(store.update(stored, expectedRevision: stored.revision))
        store.removeAll(of: "b")
        #expect(store.count == first.filter { store.contains($0) }.count)
        #expect(store.session(kept) == nil && !store.update(stored, expectedRevision: stored.revision))
    }
}
