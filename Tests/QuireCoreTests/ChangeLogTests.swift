import Testing

@testable import QuireCore

@Suite("change log")
struct ChangeLogTests {
    private func delta(_ keys: [Int32]) -> VersionDelta {
        var delta = VersionDelta()
        delta.items = keys
        return delta
    }

    @Test("changes since any version it covers are the union of the later deltas, across its chunks")
    func unionAcrossChunks() {
        var log = ChangeLog(base: 10)
        for version in 11...60 { log = log.appending(delta([Int32(version)]), version: UInt64(version)) }
        #expect(log.base == 10)
        for since in 10...60 {
            let keys = log.changes(since: UInt64(since))?.items
            #expect(keys == Set((since..<60).map { Int32($0 + 1) }), "since \(since)")
        }
        #expect(log.changes(since: 9) == nil)
        #expect(log.changes(since: 61) == nil)
    }

    @Test("past 256 versions or 16,384 keys the oldest go, one at a time")
    func bounds() {
        var log = ChangeLog(base: 0)
        for version in 1...300 { log = log.appending(delta([Int32(version)]), version: UInt64(version)) }
        #expect(log.base == 300 - UInt64(ChangeLog.maximumEntries))
        #expect(log.changes(since: log.base)?.items.count == ChangeLog.maximumEntries)
        #expect(log.changes(since: log.base - 1) == nil)

        let wide = delta(Array(0..<6_000))
        for version in 301...303 { log = log.appending(wide, version: UInt64(version)) }
        // 256 single keys and 3 × 6,000 pass 16,384: every single key goes, then the first wide delta.
        #expect(log.base == 301)
        #expect(log.changes(since: 300) == nil)
        #expect(log.changes(since: 301)?.items == Set(0..<6_000))
        #expect(log.changes(since: 303)?.items.isEmpty == true)
    }

    @Test("the bounds hold while the oldest entry is in the open chunk, and logs built on one log stay apart")
    func openChunkAndBranches() {
        var log = ChangeLog(base: 0)
        let wide = delta(Array(0..<6_000))
        for version in 1...3 { log = log.appending(wide, version: UInt64(version)) }
        // 3 × 6,000 pass 16,384 before any chunk is full: the first goes.
        #expect(log.base == 1)
        #expect(log.changes(since: 0) == nil)
        #expect(log.changes(since: 1)?.items == Set(0..<6_000))
        for version in 4...40 { log = log.appending(delta([-Int32(version)]), version: UInt64(version)) }
        #expect(log.base == 1)
        #expect(log.changes(since: 3)?.items == Set((4...40).map { -Int32($0) }))
        #expect(log.changes(since: 1)?.items == Set(0..<6_000).union((4...40).map { -Int32($0) }))

        let first = log.appending(delta([100]), version: 41)
        let second = log.appending(delta([200]), version: 41)
        #expect(first.changes(since: 40)?.items == [100])
        #expect(second.changes(since: 40)?.items == [200])
        #expect(log.changes(since: 40)?.items.isEmpty == true)
        #expect(log.changes(since: 41) == nil)
    }

    @Test("a version out of sequence, or a delta over the key bound, starts the log anew")
    func restarts() {
        var log = ChangeLog(base: 0)
        for version in 1...20 { log = log.appending(delta([Int32(version)]), version: UInt64(version)) }
        let skipped = log.appending(delta([1]), version: 22)
        #expect(skipped.base == 22)
        #expect(skipped.changes(since: 22)?.items.isEmpty == true)
        let huge = log.appending(delta(Array(0..<Int32(ChangeLog.maximumKeys + 1))), version: 21)
        #expect(huge.base == 21)
        // The log it was appended to is unchanged (a value).
        #expect(log.changes(since: 0)?.items.count == 20)
    }
}
