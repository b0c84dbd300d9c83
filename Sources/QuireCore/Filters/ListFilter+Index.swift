/// An equality every item of a view must satisfy one of: the item's `field` holds `value`
/// (``ListFilter/indexKeys``).
public struct FilterIndexKey: Sendable, Hashable {
    /// The field read.
    public var field: FilterField
    /// The scalar it must hold.
    public var value: FilterScalar

    /// The key "`field` holds `value`".
    public init(field: FilterField, value: FilterScalar) {
        self.field = field
        self.value = value
    }
}

extension ListFilter {
    /// Keys of which every matching item has at least one (its ``FilterItem/value(at:)`` at the key's field is
    /// the key's value), or `nil` when the filter gives no such set.
    ///
    /// Views are indexed by these keys (architecture.md): a changed item is matched only against the
    /// views keyed by one of its values, plus the views without keys. Read from the canonical form:
    /// - an `eq` term gives its one key, an `in` term one key per value;
    /// - an `all` gives the keys of its member with the fewest keys (the first in canonical order on a tie), or
    ///   `nil` when no member has keys;
    /// - an `any` gives the union of its members' keys when every member has keys, else `nil`;
    /// - any other term, and `not`, give `nil`.
    ///
    /// So a top-level `eq` or `in`, or one inside a top-level `all`, gives its keys, and so do `not(ne)` (which is
    /// `eq`) and an `any` of such terms. An empty array (only from a hand-built empty `any` or `in`) means that no
    /// item matches.
    ///
    /// - Complexity: O(*n* log *n*) in the size of the filter.
    public var indexKeys: [FilterIndexKey]? {
        canonicalized().requiredKeys()
    }

    private func requiredKeys() -> [FilterIndexKey]? {
        switch self {
        case .term(let term):
            switch term.op {
            case .eq(let value): return [FilterIndexKey(field: term.field, value: value)]
            case .in(let values): return values.map { FilterIndexKey(field: term.field, value: $0) }
            default: return nil
            }
        case .all(let filters):
            var fewest: [FilterIndexKey]?
            for filter in filters {
                guard let keys = filter.requiredKeys() else { continue }
                if keys.count < fewest?.count ?? .max { fewest = keys }
            }
            return fewest
        case .any(let filters):
            var union: [FilterIndexKey] = []
            var seen: Set<FilterIndexKey> = []
            for filter in filters {
                guard let keys = filter.requiredKeys() else { return nil }
                for key in keys where seen.insert(key).inserted { union.append(key) }
            }
            return union
        case .not:
            return nil
        }
    }
}
