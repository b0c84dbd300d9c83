/// What a token may do: its `scope` claim (openapi.yaml), space-separated, OAuth style:
/// `read:<pattern>` and `write:<pattern>`, where a pattern is a list name or a prefix ending in `*`
/// (`read:inbox-alice read:news-* write:drafts-alice`; `read:*` reads every list). Other scopes are
/// ignored; write does not imply read.
public struct Scopes: Sendable, Equatable {
    private var read = Patterns()
    private var write = Patterns()

    /// Parses a `scope` claim.
    ///
    /// - Complexity: O(*n*) in the length of `claim`.
    public init(_ claim: String) {
        for scope in claim.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            if scope.hasPrefix("read:") {
                read.add(scope.dropFirst("read:".count))
            } else if scope.hasPrefix("write:") {
                write.add(scope.dropFirst("write:".count))
            }
        }
    }

    /// Whether `read:` covers `list`.
    ///
    /// - Complexity: O(1) for an exact name, plus O(*p*) in the number of prefix patterns.
    public func mayRead(_ list: String) -> Bool { read.matches(list) }

    /// Whether `write:` covers `list`.
    public func mayWrite(_ list: String) -> Bool { write.matches(list) }

    /// What `read:` covers: list names (`read:inbox-alice`) and prefixes (`read:news-*` is `news-`; `read:*`
    /// is the empty prefix, every list). A listing reads these ranges of names only.
    public var readPatterns: (names: Set<String>, prefixes: Set<String>) { (read.names, read.prefixes) }

    /// Names and prefixes of one kind of scope. Sets: two claims that give the same scopes in another order, or
    /// one of them twice, are equal.
    private struct Patterns: Sendable, Equatable {
        var names: Set<String> = []
        var prefixes: Set<String> = []

        mutating func add(_ pattern: Substring) {
            guard !pattern.isEmpty else { return }
            if pattern.hasSuffix("*") {
                prefixes.insert(String(pattern.dropLast()))
            } else {
                names.insert(String(pattern))
            }
        }

        func matches(_ list: String) -> Bool {
            names.contains(list) || prefixes.contains { list.hasPrefix($0) }
        }
    }
}
