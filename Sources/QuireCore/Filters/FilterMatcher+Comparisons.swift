/// The comparisons of a prepared term: operands as bytes, `in` as sorted values.
extension FilterMatcher {
    /// A scalar operand with its string as bytes.
    enum Operand: Sendable {
        case string([UInt8])
        case number(Double)
        case bool(Bool)
        case null

        init(_ scalar: FilterScalar) {
            switch scalar {
            case .string(let text): self = .string(Array(text.utf8))
            case .number(let value): self = .number(value)
            case .bool(let flag): self = .bool(flag)
            case .null: self = .null
            }
        }

        init(_ bound: FilterBound) {
            switch bound {
            case .string(let text): self = .string(Array(text.utf8))
            case .number(let value): self = .number(value)
            }
        }

        /// Whether a value is this scalar: same kind, same bytes or same number.
        func equals(_ value: JSONScanner.Scalar) -> Bool {
            switch (value, self) {
            case (.string(let content), .string(let bytes)): TextSearch.compare(content, bytes) == 0
            case (.number(let number), .number(let operand)): number == operand
            case (.bool(let flag), .bool(let operand)): flag == operand
            case (.null, .null): true
            default: false
            }
        }

        /// A value's order against this bound, or `nil` when the kinds differ (a bound is a string or a number).
        func order(of value: JSONScanner.Scalar) -> Int? {
            switch (value, self) {
            case (.string(let content), .string(let bytes)): TextSearch.compare(content, bytes)
            case (.number(let number), .number(let operand)):
                number < operand ? -1 : (number > operand ? 1 : (number == operand ? 0 : nil))  // NaN: no order
            default: nil
            }
        }
    }

    /// The values of an `in`, by kind: strings and numbers sorted for a binary search.
    struct ValueSet: Sendable {
        private var strings: [[UInt8]] = []
        private var numbers: [Double] = []
        private var hasFalse = false
        private var hasTrue = false
        private var hasNull = false

        init(_ scalars: [FilterScalar]) {
            for scalar in scalars {
                switch scalar {
                case .string(let text): strings.append(Array(text.utf8))
                case .number(let value): if !value.isNaN { numbers.append(value) }  // NaN equals nothing
                case .bool(let flag): if flag { hasTrue = true } else { hasFalse = true }
                case .null: hasNull = true
                }
            }
            strings.sort { $0.lexicographicallyPrecedes($1) }
            numbers.sort()
        }

        func contains(_ value: JSONScanner.Scalar) -> Bool {
            switch value {
            case .string(let content): Self.search(strings) { TextSearch.compare(content, $0) }
            case .number(let number): Self.search(numbers) { FilterOrder.compare(number, $0) }
            case .bool(let flag): flag ? hasTrue : hasFalse
            case .null: hasNull
            case .escapedString, .composite, .invalid: false
            }
        }

        /// Whether sorted `values` hold one for which `order` (the sought value against it) is zero.
        private static func search<Value>(_ values: [Value], _ order: (Value) -> Int) -> Bool {
            var low = 0
            var high = values.count
            while low < high {
                let middle = (low + high) / 2
                let result = order(values[middle])
                if result == 0 { return true }
                if result < 0 { high = middle } else { low = middle + 1 }
            }
            return false
        }
    }

    enum Test: Sendable {
        case eq(Operand)
        case ne(Operand)
        case `in`(ValueSet)
        case lt(Operand)
        case lte(Operand)
        case gt(Operand)
        case gte(Operand)
        case contains([UInt8])
        case exists(Bool)

        init(_ op: FilterOp) {
            switch op {
            case .eq(let scalar): self = .eq(Operand(scalar))
            case .ne(let scalar): self = .ne(Operand(scalar))
            case .in(let scalars): self = .in(ValueSet(scalars))
            case .lt(let bound): self = .lt(Operand(bound))
            case .lte(let bound): self = .lte(Operand(bound))
            case .gt(let bound): self = .gt(Operand(bound))
            case .gte(let bound): self = .gte(Operand(bound))
            case .contains(let text): self = .contains(Array(text.utf8))
            case .exists(let flag): self = .exists(flag)
            }
        }

        /// Whether a present value passes; `value` is never ``JSONScanner/Scalar/escapedString(_:)``.
        func passes(_ value: JSONScanner.Scalar) -> Bool {
            switch self {
            case .eq(let operand): return operand.equals(value)
            case .ne(let operand): return !operand.equals(value)
            case .in(let values): return values.contains(value)
            case .lt(let bound): return bound.order(of: value).map { $0 < 0 } ?? false
            case .lte(let bound): return bound.order(of: value).map { $0 <= 0 } ?? false
            case .gt(let bound): return bound.order(of: value).map { $0 > 0 } ?? false
            case .gte(let bound): return bound.order(of: value).map { $0 >= 0 } ?? false
            case .contains(let needle):
                guard case .string(let content) = value else { return false }
                return needle.withUnsafeBufferPointer { TextSearch.contains($0, in: content) }
            case .exists(let flag): return flag
            }
        }
    }
}
