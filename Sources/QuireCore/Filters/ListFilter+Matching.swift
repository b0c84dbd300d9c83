extension ListFilter {
    /// Whether `item` belongs to the filtered list (openapi.yaml): the semantics ``FilterMatcher`` describes.
    ///
    /// Reads the filter as it is, with nothing prepared: right for one item (a write's changed item against the
    /// views it may enter), and fast enough for a scan of a list with the filters sessions mostly send. A
    /// ``FilterMatcher``, prepared once, matches the same items faster when the filter has many terms or long `in`
    /// lists, since it reads the filter once and not once an item: build views with it.
    ///
    /// - Complexity: O(*t* · *n*) for *t* terms over an item of *n* bytes at worst (each term reads `data` up to
    ///   its value), plus O(*v*) for an `in` of *v* values, or O(*k* · *m*) for a `contains` of *m* bytes in a
    ///   string of *k*.
    public func matches(_ item: FilterItem) -> Bool {
        item.bytes.withUnsafeBufferPointer { evaluate(JSONScanner(bytes: $0), item.root) }
    }

    private func evaluate(_ scanner: JSONScanner, _ root: ItemRoot) -> Bool {
        switch self {
        case .term(let term): term.evaluate(scanner, root)
        case .all(let filters): filters.allSatisfy { $0.evaluate(scanner, root) }
        case .any(let filters): filters.contains { $0.evaluate(scanner, root) }
        case .not(let filter): !filter.evaluate(scanner, root)
        }
    }
}

extension FilterTerm {
    fileprivate func evaluate(_ scanner: JSONScanner, _ root: ItemRoot) -> Bool {
        let start: Int? =
            switch field {
            case .id: root.id
            case .type: root.type
            case .data(let keys): scanner.start(ofDataKeys: keys.lazy.map(\.utf8), in: root)
            }
        guard let start else { return op.matchesAbsentField }
        if case .exists(let flag) = op { return flag }
        return scanner.withScalar(at: start) { op.passes($0) }
    }
}

extension FilterOp {
    /// Whether the op matches a field the item does not have: only `ne` and `exists: false` do.
    var matchesAbsentField: Bool {
        switch self {
        case .ne: true
        case .exists(let flag): !flag
        default: false
        }
    }

    /// Whether a present value passes; `value` is never ``JSONScanner/Scalar/escapedString(_:)``.
    fileprivate func passes(_ value: JSONScanner.Scalar) -> Bool {
        switch self {
        case .eq(let scalar): return scalar.equals(value)
        case .ne(let scalar): return !scalar.equals(value)
        case .in(let scalars): return scalars.contains { $0.equals(value) }
        case .lt(let bound): return bound.order(of: value).map { $0 < 0 } ?? false
        case .lte(let bound): return bound.order(of: value).map { $0 <= 0 } ?? false
        case .gt(let bound): return bound.order(of: value).map { $0 > 0 } ?? false
        case .gte(let bound): return bound.order(of: value).map { $0 >= 0 } ?? false
        case .contains(let text):
            guard case .string(let content) = value else { return false }
            var needle = text
            return needle.withUTF8 { TextSearch.contains($0, in: content) }
        case .exists(let flag): return flag
        }
    }
}

extension FilterScalar {
    /// Whether a value is this scalar: same kind, same bytes or same number.
    fileprivate func equals(_ value: JSONScanner.Scalar) -> Bool {
        switch (value, self) {
        case (.string(let content), .string(let text)): TextSearch.equal(content, text)
        case (.number(let number), .number(let operand)): number == operand
        case (.bool(let flag), .bool(let operand)): flag == operand
        case (.null, .null): true
        default: false
        }
    }
}

extension FilterBound {
    /// A value's order against this bound, or `nil` when the kinds differ.
    fileprivate func order(of value: JSONScanner.Scalar) -> Int? {
        switch (value, self) {
        case (.string(let content), .string(let text)): TextSearch.compare(content, text)
        case (.number(let number), .number(let operand)):
            number < operand ? -1 : (number > operand ? 1 : (number == operand ? 0 : nil))  // NaN: no order
        default: nil
        }
    }
}

extension JSONScanner {
    /// `body` applied to the scalar that starts at `start`, a string with escapes decoded first.
    @inline(__always)
    func withScalar(at start: Int, _ body: (Scalar) -> Bool) -> Bool {
        let value = scalar(at: start)
        guard case .escapedString(let token) = value else { return body(value) }
        guard let decoded = decoded(token) else { return body(.invalid) }
        return decoded.withUnsafeBufferPointer { body(.string($0)) }
    }
}
