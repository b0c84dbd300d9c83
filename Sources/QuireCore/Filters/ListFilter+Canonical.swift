extension ListFilter {
    /// The same filter written one way: what views are keyed by, so that sessions whose filters differ only in
    /// how they are written share one view (openapi.yaml).
    ///
    /// Every step keeps the set of matching items exactly:
    /// - members of `all` and `any` sorted (``FilterOrder``) and repeated members dropped; an `all` inside an
    ///   `all` (an `any` inside an `any`) merged into it; an `all` or `any` of one member replaced by the member;
    /// - values of `in` sorted and deduplicated, and an `in` of one value written `eq`;
    /// - `not(not(x))` written `x`; `not` of `eq`, `ne` and `exists` written as the opposite term (`ne` and
    ///   `not(eq)` both match an absent field, an object and any other scalar);
    /// - numbers `-0` written `0`.
    ///
    /// `contains` text is left as it is: the parser stores it folded, and folding a hand-built one would change
    /// what it matches. The result may hold fewer terms and levels than the filter, never more.
    ///
    /// - Complexity: O(*n* log *n*) in the size of the filter.
    public func canonicalized() -> ListFilter {
        switch self {
        case .term(let term): .term(term.canonicalized())
        case .all(let filters): Self.combining(filters, all: true)
        case .any(let filters): Self.combining(filters, all: false)
        case .not(let filter): Self.negation(of: filter.canonicalized())
        }
    }

    /// `all` (or `any`) of `filters`, canonical: flattened, sorted, without repeats, unwrapped when single.
    private static func combining(_ filters: [ListFilter], all: Bool) -> ListFilter {
        var members: [ListFilter] = []
        members.reserveCapacity(filters.count)
        for filter in filters {
            switch (filter.canonicalized(), all) {
            case (.all(let inner), true), (.any(let inner), false): members.append(contentsOf: inner)
            case (let other, _): members.append(other)
            }
        }
        members = sortedUnique(members, by: FilterOrder.compare)
        if members.count == 1 { return members[0] }
        return all ? .all(members) : .any(members)
    }

    /// `not(filter)` for a canonical `filter`, canonical.
    private static func negation(of filter: ListFilter) -> ListFilter {
        guard case .term(let term) = filter else {
            if case .not(let inner) = filter { return inner }
            return .not(filter)
        }
        switch term.op {
        case .eq(let scalar): return .term(FilterTerm(field: term.field, op: .ne(scalar)))
        case .ne(let scalar): return .term(FilterTerm(field: term.field, op: .eq(scalar)))
        case .exists(let flag): return .term(FilterTerm(field: term.field, op: .exists(!flag)))
        default: return .not(filter)
        }
    }

    /// The canonical form (``canonicalized()``) as compact JSON in the grammar of openapi.yaml, the same on every
    /// run and every machine: a key for caches, and what cursors of a filtered list carry.
    ///
    /// Members are written `field` first, then the operator; numbers that are integers below 2^53 without a
    /// fraction (`2`, not `2.0`), others in their shortest round-trip form. Parsing the text gives an equal
    /// filter with the same text, for every filter the parser can give (a hand-built one can hold what the
    /// grammar cannot write: a key with a dot, a number that is not finite).
    ///
    /// - Complexity: O(*n* log *n*) in the size of the filter.
    public var canonicalText: String {
        var bytes: [UInt8] = []
        canonicalized().write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .term(let term):
            out.appendLiteral("{\"field\":")
            JSONWriter.writeString(term.field.path, into: &out)
            out.append(UInt8(ascii: ","))
            JSONWriter.writeString(term.op.name, into: &out)
            out.append(UInt8(ascii: ":"))
            term.op.writeOperand(into: &out)
            out.append(UInt8(ascii: "}"))
        case .all(let filters):
            out.appendLiteral("{\"all\":")
            Self.write(filters, into: &out)
        case .any(let filters):
            out.appendLiteral("{\"any\":")
            Self.write(filters, into: &out)
        case .not(let filter):
            out.appendLiteral("{\"not\":")
            filter.write(into: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `filters` as a JSON array and closes the object around it.
    private static func write(_ filters: [ListFilter], into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, filter) in filters.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            filter.write(into: &out)
        }
        out.appendLiteral("]}")
    }

    /// Equal when the canonical forms are: order inside `all`, `any` and `in` does not count.
    ///
    /// - Complexity: O(*n* log *n*) in the size of the filters (both are put in canonical form).
    public static func == (lhs: ListFilter, rhs: ListFilter) -> Bool {
        FilterOrder.compare(lhs.canonicalized(), rhs.canonicalized()) == 0
    }

    /// Hashes the canonical form, so that equal filters hash alike.
    ///
    /// - Complexity: O(*n* log *n*) in the size of the filter.
    public func hash(into hasher: inout Hasher) {
        canonicalized().hashStructure(into: &hasher)
    }

    private func hashStructure(into hasher: inout Hasher) {
        hasher.combine(FilterOrder.rank(of: self))
        switch self {
        case .term(let term): hasher.combine(term)
        case .all(let filters), .any(let filters):
            hasher.combine(filters.count)
            for filter in filters { filter.hashStructure(into: &hasher) }
        case .not(let filter): filter.hashStructure(into: &hasher)
        }
    }
}

extension FilterTerm {
    /// The term with `in` sorted and deduplicated (one value: `eq`) and numbers `-0` made `0`.
    func canonicalized() -> FilterTerm {
        var term = self
        switch op {
        case .eq(let scalar): term.op = .eq(scalar.canonicalized())
        case .ne(let scalar): term.op = .ne(scalar.canonicalized())
        case .in(let scalars):
            let values = sortedUnique(scalars.map { $0.canonicalized() }, by: FilterOrder.compare)
            term.op = values.count == 1 ? .eq(values[0]) : .in(values)
        case .lt(let bound): term.op = .lt(bound.canonicalized())
        case .lte(let bound): term.op = .lte(bound.canonicalized())
        case .gt(let bound): term.op = .gt(bound.canonicalized())
        case .gte(let bound): term.op = .gte(bound.canonicalized())
        case .contains, .exists: break
        }
        return term
    }
}

extension FilterOp {
    /// Appends the operator's value as JSON.
    fileprivate func writeOperand(into out: inout [UInt8]) {
        switch self {
        case .eq(let scalar), .ne(let scalar): scalar.write(into: &out)
        case .in(let scalars):
            out.append(UInt8(ascii: "["))
            for (index, scalar) in scalars.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                scalar.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .lt(let bound), .lte(let bound), .gt(let bound), .gte(let bound):
            switch bound {
            case .number(let value): writeNumber(value, into: &out)
            case .string(let text): JSONWriter.writeString(text, into: &out)
            }
        case .contains(let text): JSONWriter.writeString(text, into: &out)
        case .exists(let flag): out.appendLiteral(flag ? "true" : "false")
        }
    }
}

extension FilterScalar {
    /// The scalar with `-0` made `0`.
    func canonicalized() -> FilterScalar {
        if case .number(let value) = self { return .number(value + 0) }
        return self
    }

    fileprivate func write(into out: inout [UInt8]) {
        switch self {
        case .string(let text): JSONWriter.writeString(text, into: &out)
        case .number(let value): writeNumber(value, into: &out)
        case .bool(let flag): out.appendLiteral(flag ? "true" : "false")
        case .null: out.appendLiteral("null")
        }
    }
}

extension FilterBound {
    /// The bound with `-0` made `0`.
    func canonicalized() -> FilterBound {
        if case .number(let value) = self { return .number(value + 0) }
        return self
    }
}

/// Appends `value` as the shortest JSON number that reads back as it: integers below 2^53 as digits alone.
private func writeNumber(_ value: Double, into out: inout [UInt8]) {
    if value.rounded() == value, abs(value) < 9_007_199_254_740_992 {
        JSONWriter.writeInteger(Int(value), into: &out)
    } else {
        JSONWriter.writeDouble(value, into: &out)
    }
}

/// `values` sorted by `order`, each run of equal values kept once.
private func sortedUnique<Value>(_ values: [Value], by order: (Value, Value) -> Int) -> [Value] {
    var unique: [Value] = []
    unique.reserveCapacity(values.count)
    for value in values.sorted(by: { order($0, $1) < 0 }) {
        if let last = unique.last, order(last, value) == 0 { continue }
        unique.append(value)
    }
    return unique
}
