import Testing

@testable import QuireAuth

/// The `scope` claim parsed: `read:` and `write:` patterns, names and prefixes ending in `*`.
@Suite("Scopes")
struct ScopesTests {
    @Test("scope patterns: names, prefixes ending in *, read and write apart")
    func scopePatterns() {
        let scopes = Scopes("read:inbox-alice read:news-* write:drafts-alice profile openid read: write:*x")
        #expect(scopes.mayRead("inbox-alice"))
        #expect(!scopes.mayRead("inbox-alice2"))
        #expect(scopes.mayRead("news-"))
        #expect(scopes.mayRead("news-today"))
        #expect(!scopes.mayRead("drafts-alice"))
        #expect(scopes.mayWrite("drafts-alice"))
        #expect(!scopes.mayWrite("inbox-alice"))
        #expect(Scopes("read:*").mayRead("anything"))
        #expect(!Scopes("").mayRead("anything"))
        // Many names, one of them twice: every one reads, no other.
        let many = Scopes((0..<20).map { "read:list-\($0)" }.joined(separator: " ") + " read:list-3")
        #expect((0..<20).allSatisfy { many.mayRead("list-\($0)") })
        #expect(!many.mayRead("list-20") && !many.mayWrite("list-1"))
        #expect(Scopes("read:a read:b write:c-*") == Scopes("write:c-* read:b read:a read:a"))
        #expect(Scopes("read:a-* read:b-* read:c") == Scopes("read:c read:b-* read:a-*"))
        #expect(Scopes("read:a") != Scopes("read:b"))
    }

    @Test("the read patterns: names and prefixes apart, without the star; other scopes ignored")
    func readPatterns() {
        let patterns = Scopes("read:inbox-alice read:news-* write:drafts-* openid  read:inbox-alice").readPatterns
        #expect(patterns.names == ["inbox-alice"])
        #expect(patterns.prefixes == ["news-"])
        #expect(Scopes("write:a profile").readPatterns.names.isEmpty)
    }
}
