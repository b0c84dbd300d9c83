import QuireCore
import Testing

@Suite("Windows and pages")
struct WindowTests {
    let version: ListVersion

    init() throws {
        version = try makeVersion([
            ("e0", []), ("s1", ["a", "p>c1,c2", "b"]), ("e2", []), ("s3", ["d", "q>c3"]), ("e4", []),
        ])
    }

    func describe(_ window: Window) -> String {
        window.sections.map { section in
            "\(section.id)@\(section.offset)/\(section.count)["
                + section.items.map { item in
                    item.parentID.map { "\(item.id)<\($0):\(item.depth)" } ?? item.id
                }.joined(separator: " ") + "]"
        }.joined(separator: " ")
    }

    @Test func visibleOrderFollowsTheExpandedSet() {
        #expect(version.visibleCount() == 5)
        #expect(version.visibleCount(expanded: ["p"]) == 7)
        #expect(version.visibleCount(expanded: ["p", "q", "c1"]) == 8)
        #expect(
            describe(version.firstPage(limit: 100, expanded: ["p"]))
                == "e0@0/0[] s1@0/5[a p c1<p:1 c2<p:1 b] e2@0/0[] s3@0/2[d q] e4@0/0[]")
        #expect(version.visiblePosition(of: "c2", expanded: ["p"]) == 3)
        #expect(version.visiblePosition(of: "c2") == nil)
        #expect(version.visiblePosition(of: "c3", expanded: ["p", "q"]) == 7)
        #expect(version.visiblePosition(of: "d", expanded: ["p", "q"]) == 5)
    }

    @Test func pagesForwardAndBackward() {
        let expanded: Set<String> = ["p"]
        let first = version.firstPage(limit: 2, expanded: expanded)
        #expect(describe(first) == "e0@0/0[] s1@0/5[a p]")
        #expect(!first.hasPrev && first.hasNext && first.total == 7)
        let second = version.page(after: first.lastItemID!, limit: 3, expanded: expanded)!
        #expect(describe(second) == "s1@2/5[c1<p:1 c2<p:1 b]")
        let third = version.page(after: second.lastItemID!, limit: 3, expanded: expanded)!
        #expect(describe(third) == "e2@0/0[] s3@0/2[d q] e4@0/0[]")
        #expect(third.hasPrev && !third.hasNext)
        let back = version.page(before: "d", limit: 2, expanded: expanded)!
        #expect(describe(back) == "s1@3/5[c2<p:1 b]")
        #expect(describe(version.lastPage(limit: 1)) == "s3@1/2[q] e4@0/0[]")
        #expect(describe(version.page(around: "c1", limit: 3, expanded: expanded)!) == "s1@1/5[p c1<p:1 c2<p:1]")
        #expect(describe(version.page(around: "a", limit: 3)!) == "e0@0/0[] s1@0/3[a p b]")
        #expect(version.page(after: "c1", limit: 3) == nil)
        #expect(version.page(after: "q", limit: 3)!.count == 0)
    }

    @Test func statelessPagesShowChildCount() {
        var bytes: [UInt8] = []
        version.firstPage(limit: 2).encodeSections(into: &bytes)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"[{"id":"e0","header":null,"footer":null,"offset":0,"count":0,"items":[]},{"id":"s1","header":null,"footer":null,"offset":0,"count":3,"items":[{"id":"a","type":"cell","data":null},{"id":"p","type":"cell","data":null,"childCount":2}]}]"#
        )
        bytes = []
        version.firstPage(limit: 3, expanded: ["p"]).sections[1].items[2].write(into: &bytes)
        #expect(
            String(decoding: bytes, as: UTF8.self) == #"{"id":"c1","type":"cell","data":null,"parent":"p","depth":1}"#)
    }

    @Test func windowsOfAnEmptyList() throws {
        let empty = try makeVersion([("a", []), ("b", [])])
        #expect(describe(empty.firstPage(limit: 10)) == "a@0/0[] b@0/0[]")
        #expect(describe(ListVersion.empty().firstPage(limit: 10)) == "")
    }
}

@Suite("Windows at the edges")
struct WindowEdgeTests {
    @Test func extremeLimitsAreClamped() throws {
        let version = try makeVersion([("s", ["a", "b", "c"])])
        #expect(version.firstPage(limit: Int.max).count == 3)
        #expect(version.firstPage(limit: Int.min).count == 0)
        #expect(version.lastPage(limit: Int.min).count == 0)
        #expect(version.page(after: "a", limit: Int.max)?.itemIDs == ["b", "c"])
        #expect(version.page(before: "c", limit: Int.max)?.itemIDs == ["a", "b"])
        #expect(version.page(around: "b", limit: Int.max)?.count == 3)
        #expect(version.window(range: -5..<Int.max).count == 3)
        let window = version.firstPage(limit: 1)
        #expect(version.window(following: window, expanded: [], extend: .next(Int.max)).count == 3)
        #expect(version.window(following: window, expanded: [], extend: .previous(Int.min)).count == 1)
    }
}
