/// Which top-level items a filtered session sees (openapi.yaml): terms on an item's `id`, `type` or `data`,
/// combined with `all`, `any` and `not`.
///
/// ```json
/// { "all": [ { "field": "type", "eq": "message" },
///            { "not": { "field": "data.from", "in": ["bot", "system"] } } ] }
/// ```
///
/// ``init(json:)`` and ``init(text:)`` check the grammar and its limits and give the canonical form
/// (``canonicalized()``). Equality and hashing compare canonical forms, so filters that differ only by the order
/// of members inside `all`/`any` or of values inside `in` are equal, hash alike and have the same
/// ``canonicalText``: sessions with the same filter share one view (architecture.md).
public indirect enum ListFilter: Sendable, Hashable {
    /// One condition on one field.
    case term(FilterTerm)
    /// Every filter matches (`true` when empty, which the grammar does not allow).
    case all([ListFilter])
    /// At least one filter matches (`false` when empty, which the grammar does not allow).
    case any([ListFilter])
    /// The filter does not match.
    case not(ListFilter)
}

extension ListFilter {
    /// Most terms in one filter, counted as written (openapi.yaml).
    public static let maxTerms = 32
    /// Most levels of `all`, `any` and `not` nested in one another (openapi.yaml).
    public static let maxLevels = 4
    /// Most values in one `in` (openapi.yaml).
    public static let maxInValues = 100
    /// Most UTF-8 bytes of a `contains` text, as written (before case folding).
    public static let maxContainsBytes = 64
}
