import Testing

@testable import QuireCore

@Suite("Session windows")
struct SessionWindowTests {
    @Test func followsItsItemsIntoTheNextVersion() throws {
        let old = try makeVersion([("s", (0..<10).map { "i\($0)" })])
        let window = old.page(after: "i2", limit: 4)!
        #expect(window.itemIDs == ["i3", "i4", "i5", "i6"])
        let new = try applying(
            old,
            #"{"op":"removeItems","ids":["i3"]},{"op":"insertItems","after":"i4","items":[{"id":"x","type":"t"}]},{"op":"moveItem","id":"i5","section":"s"}"#
        )
        let next = new.window(following: window, expanded: [])
        #expect(next.itemIDs == ["i4", "x", "i6"])
        #expect(new.window(following: window, expanded: [], extend: .next(2)).itemIDs == ["i4", "x", "i6", "i7", "i8"])
        #expect(new.window(following: window, expanded: [], extend: .previous(1)).itemIDs == ["i2", "i4", "x", "i6"])
    }

    @Test func aWindowAtTheStartStaysThere() throws {
        let old = try makeVersion([("s", ["a", "b", "c"])])
        let window = old.firstPage(limit: 2)
        let new = try applying(old, #"{"op":"insertItems","section":"s","before":"a","items":[{"id":"x","type":"t"}]}"#)
        #expect(new.window(following: window, expanded: []).itemIDs == ["x", "a", "b"])
    }

    @Test func expandingShowsTheChildrenInsideTheWindow() throws {
        let version = try makeVersion([("s", ["a", "p>c1,c2", "b", "z"])])
        let window = version.firstPage(limit: 3)
        let expanded = version.window(following: window, expanded: ["p"])
        #expect(expanded.itemIDs == ["a", "p", "c1", "c2", "b"])
        let changes = window.changes(to: expanded)
        #expect(changes.insertedItemCount == 2 && changes.operationCount == 2)
    }
}

@Suite("Shared answers")
struct SharedAnswerTests {
    final class Encoded: Sendable {}

    /// Every session given the same answer gets the same encoding: made by the first caller only, whatever the
    /// encoding's type, an optional one included (nothing kept must not read as a kept `nil`).
    @Test func encodesOnceForEveryCaller() throws {
        let version = try makeVersion([("s", ["a", "b", "c"])])
        let window = SessionWindow(version.firstPage(limit: 2), of: version)
        let shared = SharedAnswer(content: .unchanged(window), window: window, isIncremental: true)
        var encodings = 0
        let first = shared.encoded { _ -> Encoded in
            encodings += 1
            return Encoded()
        }
        for _ in 0..<3 {
            #expect(
                shared.encoded { _ -> Encoded in
                    encodings += 1
                    return Encoded()
                } === first)
        }
        #expect(encodings == 1)

        let another = SharedAnswer(content: .unchanged(window), window: window, isIncremental: true)
        var optionalEncodings = 0
        for _ in 0..<3 {
            let made: Encoded? = another.encoded { _ -> Encoded? in
                optionalEncodings += 1
                return Encoded()
            }
            #expect(made != nil)
        }
        #expect(optionalEncodings == 1)
    }
}
