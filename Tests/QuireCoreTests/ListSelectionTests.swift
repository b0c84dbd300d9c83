import QuireCore
import Testing

/// The ranges of names a listing reads (``ListSelection``) and its cursor (``ListCursor``).
@Suite("Listing: selections, cursors, pages")
struct ListSelectionTests {
    @Test("patterns become disjoint ranges in byte order: prefixes inside prefixes and covered names go")
    func normalization() {
        let selection = ListSelection(
            prefixes: ["inbox-1", "inbox-", "news-", "news-", "Zeta", "a.b"], names: ["inbox-7", "a", "news", "zz"])
        #expect(selection.prefixes == ["Zeta", "a.b", "inbox-", "news-"])
        #expect(selection.names == ["a", "news", "zz"])
        #expect(
            selection.ranges == [
                .prefix("Zeta"), .name("a"), .prefix("a.b"), .prefix("inbox-"), .name("news"), .prefix("news-"),
                .name("zz"),
            ])
        #expect(ListSelection(prefixes: ["", "x"], names: ["y"]) == .all)
        #expect(ListSelection.empty.isEmpty && !ListSelection.all.isEmpty)
        #expect(
            ListNameRange.prefix("inbox-")
                == ListNameRange(lower: "inbox-", includesLower: true, upper: "inbox.", includesUpper: false))
    }

    @Test("narrowed to a prefix: longer prefixes stay, shorter ones become it, names must start with it")
    func narrowing() {
        let selection = ListSelection(prefixes: ["inbox-1", "in", "news-"], names: ["inbox-42", "other"])
        #expect(selection.narrowed(toPrefix: "inbox-") == ListSelection(prefixes: ["inbox-"], names: []))
        let scoped = ListSelection(prefixes: ["inbox-1", "news-"], names: ["inbox-42", "other"])
        #expect(scoped.narrowed(toPrefix: "inbox-") == ListSelection(prefixes: ["inbox-1"], names: ["inbox-42"]))
        #expect(scoped.narrowed(toPrefix: "inbox-10") == ListSelection(prefixes: ["inbox-10"], names: []))
        #expect(scoped.narrowed(toPrefix: "inbox-4").ranges == [.name("inbox-42")])
        #expect(scoped.narrowed(toPrefix: "zzz").isEmpty)
        #expect(scoped.narrowed(toPrefix: "") == scoped)
        #expect(ListSelection.all.narrowed(toPrefix: "a") == ListSelection(prefixes: ["a"], names: []))
    }

    @Test("the successor of a prefix bounds exactly the names that start with it")
    func successors() {
        #expect(ListNameRange.successor(of: "") == nil)
        #expect(ListNameRange.successor(of: "a") == "b")
        #expect(ListNameRange.successor(of: "inbox-") == "inbox.")
        #expect(ListNameRange.successor(of: "az") == "a{")
        #expect(ListNameRange.successor(of: "a\u{D7FF}") == "a\u{E000}")
        #expect(ListNameRange.successor(of: "a\u{10FFFF}") == "b")
        #expect(ListNameRange.successor(of: "\u{10FFFF}\u{10FFFF}") == nil)
        let range = ListNameRange.prefix("ab")
        for (name, inside) in [
            ("ab", true), ("ab-", true), ("abz", true), ("ab\u{10FFFF}", true), ("a", false),
            ("aa", false), ("ac", false), ("b", false), ("aB", false),
        ] {
            #expect(range.contains(name) == inside, "\(name)")
        }
    }

    @Test("a cursor decodes only for the prefix it was made for, and not once edited")
    func cursors() {
        let cursor = ListCursor(after: "inbox-42", prefix: "inbox-")
        #expect(ListCursor(encoded: cursor.encoded, prefix: "inbox-") == cursor)
        #expect(ListCursor(encoded: cursor.encoded, prefix: "") == nil)
        #expect(ListCursor(encoded: cursor.encoded, prefix: "inbox-4") == nil)
        #expect(ListCursor(encoded: ListCursor(after: "x", prefix: "").encoded, prefix: "")?.after == "x")
        var bytes = Array(cursor.encoded.utf8)
        for index in bytes.indices.dropLast() {
            let original = bytes[index]
            bytes[index] = original == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(ListCursor(encoded: String(decoding: bytes, as: UTF8.self), prefix: "inbox-") == nil, "\(index)")
            bytes[index] = original
        }
        for text in ["", "A", "TA", "TAAAAA", "!!!!", String(repeating: "T", count: 4_000)] {
            #expect(ListCursor(encoded: text, prefix: "") == nil, "\(text)")
        }
        let page = PageCursor(direction: .after, position: 3, anchors: ["a"], list: "l").encoded
        #expect(ListCursor(encoded: page, prefix: "") == nil)
    }
}
