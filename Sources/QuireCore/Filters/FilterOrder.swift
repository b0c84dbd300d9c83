/// The one total order of filters and their parts, behind both the canonical form (members of `all`/`any` and
/// values of `in` are sorted by it) and equality (two parts are equal when neither sorts first).
///
/// Strings sort by their UTF-8 bytes and numbers by value, so the order never depends on a locale, on Unicode
/// normalization or on the run: a canonical filter's text is stable enough to sit in cursors and cache keys.
/// Each `compare` returns a negative number, zero or a positive number, as `lhs` sorts before, with or after `rhs`.
enum FilterOrder {
    static func compare(_ lhs: String, _ rhs: String) -> Int {
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let a?, let b?) where a != b: return a < b ? -1 : 1
            default: continue
            }
        }
    }

    /// Numbers by value, `-0` with `0`; NaN, which the grammar cannot write, after every number and equal to
    /// itself, so that the order stays total for hand-built filters.
    static func compare(_ lhs: Double, _ rhs: Double) -> Int {
        if lhs.isNaN || rhs.isNaN { return lhs.isNaN == rhs.isNaN ? 0 : (lhs.isNaN ? 1 : -1) }
        return lhs < rhs ? -1 : (lhs > rhs ? 1 : 0)
    }

    static func compare(_ lhs: Bool, _ rhs: Bool) -> Int {
        lhs == rhs ? 0 : (lhs ? 1 : -1)
    }

    static func compare<Element>(_ lhs: [Element], _ rhs: [Element], by order: (Element, Element) -> Int) -> Int {
        for (left, right) in zip(lhs, rhs) {
            let result = order(left, right)
            if result != 0 { return result }
        }
        return lhs.count - rhs.count
    }

    static func compare(_ lhs: FilterScalar, _ rhs: FilterScalar) -> Int {
        switch (lhs, rhs) {
        case (.null, .null): 0
        case (.bool(let a), .bool(let b)): compare(a, b)
        case (.number(let a), .number(let b)): compare(a, b)
        case (.string(let a), .string(let b)): compare(a, b)
        default: rank(of: lhs) - rank(of: rhs)
        }
    }

    static func compare(_ lhs: FilterBound, _ rhs: FilterBound) -> Int {
        switch (lhs, rhs) {
        case (.number(let a), .number(let b)): compare(a, b)
        case (.string(let a), .string(let b)): compare(a, b)
        case (.number, .string): -1
        case (.string, .number): 1
        }
    }

    static func compare(_ lhs: FilterField, _ rhs: FilterField) -> Int {
        switch (lhs, rhs) {
        case (.id, .id), (.type, .type): 0
        case (.data(let a), .data(let b)): compare(a, b, by: compare)
        case (.id, _): -1
        case (_, .id): 1
        case (.type, _): -1
        case (_, .type): 1
        }
    }

    static func compare(_ lhs: FilterOp, _ rhs: FilterOp) -> Int {
        switch (lhs, rhs) {
        case (.eq(let a), .eq(let b)), (.ne(let a), .ne(let b)): compare(a, b)
        case (.in(let a), .in(let b)): compare(a, b, by: compare)
        case (.lt(let a), .lt(let b)), (.lte(let a), .lte(let b)), (.gt(let a), .gt(let b)),
            (.gte(let a), .gte(let b)):
            compare(a, b)
        case (.contains(let a), .contains(let b)): compare(a, b)
        case (.exists(let a), .exists(let b)): compare(a, b)
        default: rank(of: lhs) - rank(of: rhs)
        }
    }

    static func compare(_ lhs: FilterTerm, _ rhs: FilterTerm) -> Int {
        let byField = compare(lhs.field, rhs.field)
        return byField != 0 ? byField : compare(lhs.op, rhs.op)
    }

    /// Terms first, then `all`, `any` and `not`; members compared in order, as written (callers compare
    /// canonical forms when order inside `all`/`any` must not count).
    static func compare(_ lhs: ListFilter, _ rhs: ListFilter) -> Int {
        switch (lhs, rhs) {
        case (.term(let a), .term(let b)): compare(a, b)
        case (.all(let a), .all(let b)), (.any(let a), .any(let b)): compare(a, b, by: compare)
        case (.not(let a), .not(let b)): compare(a, b)
        default: rank(of: lhs) - rank(of: rhs)
        }
    }

    static func rank(of scalar: FilterScalar) -> Int {
        switch scalar {
        case .null: 0
        case .bool: 1
        case .number: 2
        case .string: 3
        }
    }

    static func rank(of op: FilterOp) -> Int {
        switch op {
        case .eq: 0
        case .ne: 1
        case .in: 2
        case .lt: 3
        case .lte: 4
        case .gt: 5
        case .gte: 6
        case .contains: 7
        case .exists: 8
        }
    }

    static func rank(of filter: ListFilter) -> Int {
        switch filter {
        case .term: 0
        case .all: 1
        case .any: 2
        case .not: 3
        }
    }

    /// Feeds `text`'s UTF-8 bytes and length to `hasher`: equal bytes, equal hashes (Swift's own `String` hash
    /// follows canonical equivalence, which these types do not).
    static func hashBytes(of text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }
}
