import QuireCore
import Testing

/// The ranges of names a listing reads (``ListSelection``), its cursor (``ListCursor``), and the registry's
/// listing from memory (the in-memory store's), checked against listing every name and filtering.
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

    @Test(
        "pages of the registry's lists (no store) hold exactly the selected names after the cursor, in byte order",
        arguments: [1, 2, 3, 4, 5])
    func pagesFromMemory(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let alphabet: [Character] = ["a", "b", "B", "-", ".", "_", "0", "z"]
        func word(_ length: ClosedRange<Int>) -> String {
            String((0..<Int.random(in: length, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
        }
        let registry = ListRegistry(store: InMemoryListStore(), limits: ListLimits())
        let names = Set((0..<300).map { _ in word(1...4) })
        for name in names {
            _ = try registry.write(name) { _ throws(ListRegistry.WriteError) in
                do throws(ListValidationError) {
                    return try ListVersion(document: ["sections": [["id": "s", "items": []]]])
                } catch { throw .invalidList(error) }
            }
        }
        for _ in 0..<40 {
            let prefixes = (0..<Int.random(in: 0...3, using: &random)).map { _ in word(0...2) }
            let exact = (0..<Int.random(in: 0...3, using: &random)).map { _ in word(1...3) }
            let prefix = Bool.random(using: &random) ? "" : word(1...2)
            let selection = ListSelection(prefixes: prefixes, names: exact).narrowed(toPrefix: prefix)
            let expected = names.filter { name in
                name.utf8.starts(with: prefix.utf8)
                    && (exact.contains(name) || prefixes.contains { name.utf8.starts(with: $0.utf8) })
            }
            .sorted(by: ListNameRange.precedes)
            for name in names { #expect(selection.contains(name) == expected.contains(name)) }
            let limit = Int.random(in: 1...7, using: &random)
            var listed: [String] = []
            var after: String?
            while true {
                let page = try registry.summaries(of: selection, after: after, limit: limit + 1)
                listed += page.prefix(limit).map(\.name)
                guard page.count > limit else { break }
                after = page[limit - 1].name
            }
            #expect(listed == expected, "prefixes \(prefixes), names \(exact), prefix \(prefix)")
        }
    }
}
