/// One condition of a filter: a field of the item and what its value must be (openapi.yaml),
/// written `{ "field": <path>, <op>: <value> }`.
public struct FilterTerm: Sendable, Hashable {
    /// Where the value is read: the item's `id`, its `type`, or a member inside its `data`.
    public var field: FilterField
    /// What the value must be.
    public var op: FilterOp

    /// A term on `field`.
    public init(field: FilterField, op: FilterOp) {
        self.field = field
        self.op = op
    }
}

/// A field a term reads: `id`, `type`, or `data` followed by `.key` segments (`data.author.name`).
///
/// Keys compare by their UTF-8 bytes, as the item's JSON is matched: two spellings of `é` (precomposed or
/// with a combining accent) are different keys, although Swift's `String` calls them equal.
public enum FilterField: Sendable, Hashable {
    /// The item's `id`.
    case id
    /// The item's `type`.
    case type
    /// A member inside the item's `data`: the keys after `data`, outermost first (`["author", "name"]` for
    /// `data.author.name`). The grammar gives at least one key, none empty and none containing a dot.
    case data([String])

    /// The field as the grammar writes it: `id`, `type`, `data.author.name`.
    ///
    /// - Complexity: O(*n*) in the length of the path.
    public var path: String {
        switch self {
        case .id: "id"
        case .type: "type"
        case .data(let keys): (["data"] + keys).joined(separator: ".")
        }
    }

    /// The field written `path` (`id`, `type`, `data.key…`), or `nil` when `path` is none of these or has an
    /// empty key (`data.`, `data..x`).
    ///
    /// - Complexity: O(*n*) in the length of `path`.
    public init?(path: String) {
        switch path {
        case "id": self = .id
        case "type": self = .type
        default:
            guard path.utf8.starts(with: "data.".utf8) else { return nil }
            let keys = path.utf8.dropFirst(5).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard keys.allSatisfy({ !$0.isEmpty }) else { return nil }
            self = .data(keys.map { String(decoding: $0, as: UTF8.self) })
        }
    }

    /// Equal when both are `id`, both `type`, or both `data` with the same keys, byte for byte.
    public static func == (lhs: FilterField, rhs: FilterField) -> Bool {
        FilterOrder.compare(lhs, rhs) == 0
    }

    /// Hashes the keys' bytes, as ``==(_:_:)`` compares them.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .id: hasher.combine(0)
        case .type: hasher.combine(1)
        case .data(let keys):
            hasher.combine(2)
            hasher.combine(keys.count)
            for key in keys { FilterOrder.hashBytes(of: key, into: &hasher) }
        }
    }
}

/// What a term asks of the value it reads (openapi.yaml).
///
/// A field that is absent matches only ``ne(_:)`` and `exists(false)`; a value of another kind than the operand
/// (a string against a number bound, an object against any scalar) matches nothing but ``ne(_:)``.
public enum FilterOp: Sendable, Hashable {
    /// The value is this scalar (numbers by value: `1` equals `1.0`).
    case eq(FilterScalar)
    /// The field is absent or its value is not this scalar (an object or an array is not equal to any scalar).
    case ne(FilterScalar)
    /// The value is one of these scalars (1 to 100 in the grammar).
    case `in`([FilterScalar])
    /// The value is below the bound: a number below a number, or a string whose UTF-8 bytes sort before.
    case lt(FilterBound)
    /// The value is below or at the bound.
    case lte(FilterBound)
    /// The value is above the bound.
    case gt(FilterBound)
    /// The value is above or at the bound.
    case gte(FilterBound)
    /// The value is a string that contains this text, both case-folded. The text is stored already folded
    /// (see ``containing(_:)``): matching folds only the item's side.
    case contains(String)
    /// The field is present (`true`, even when its value is `null`) or absent (`false`).
    case exists(Bool)

    /// A ``contains(_:)`` of `text` folded as matching needs it (Unicode full case folding): what the parser
    /// stores for `"contains": text`. A `contains` built by hand with unfolded text (`"ABC"`) matches nothing.
    ///
    /// - Complexity: O(*n*) in the length of `text`.
    public static func containing(_ text: String) -> FilterOp {
        .contains(CaseFolding.folded(text))
    }

    /// The operator's member name in the grammar: `eq`, `ne`, `in`, `lt`, `lte`, `gt`, `gte`, `contains`, `exists`.
    public var name: String {
        switch self {
        case .eq: "eq"
        case .ne: "ne"
        case .in: "in"
        case .lt: "lt"
        case .lte: "lte"
        case .gt: "gt"
        case .gte: "gte"
        case .contains: "contains"
        case .exists: "exists"
        }
    }

    /// Equal when the operators and their values are (strings byte for byte, numbers by value, `in` values in
    /// the order written: ``ListFilter`` equality is the one that ignores that order).
    public static func == (lhs: FilterOp, rhs: FilterOp) -> Bool {
        FilterOrder.compare(lhs, rhs) == 0
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(FilterOrder.rank(of: self))
        switch self {
        case .eq(let scalar), .ne(let scalar): hasher.combine(scalar)
        case .in(let scalars): hasher.combine(scalars)
        case .lt(let bound), .lte(let bound), .gt(let bound), .gte(let bound): hasher.combine(bound)
        case .contains(let text): FilterOrder.hashBytes(of: text, into: &hasher)
        case .exists(let flag): hasher.combine(flag)
        }
    }
}

/// A JSON scalar a term compares with.
///
/// Numbers are compared by value (`1` equals `1.0`; `-0` is `0`), as `Double`: integers beyond 2^53 compare as
/// their nearest `Double`, on both sides alike. Strings compare by their UTF-8 bytes, not by Swift's canonical
/// equivalence, so that equality agrees with the byte order of ``FilterBound``.
public enum FilterScalar: Sendable, Hashable {
    /// A JSON string.
    case string(String)
    /// A JSON number.
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null

    /// Equal when of the same kind and value: strings byte for byte, numbers by value (`-0` equals `0`).
    public static func == (lhs: FilterScalar, rhs: FilterScalar) -> Bool {
        FilterOrder.compare(lhs, rhs) == 0
    }

    /// Hashes what ``==(_:_:)`` compares (`-0` as `0`).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let text):
            hasher.combine(0)
            FilterOrder.hashBytes(of: text, into: &hasher)
        case .number(let value):
            hasher.combine(1)
            hasher.combine(value == 0 ? 0 : (value.isNaN ? .nan : value))
        case .bool(let flag):
            hasher.combine(2)
            hasher.combine(flag)
        case .null:
            hasher.combine(3)
        }
    }
}

/// The operand of `lt`, `lte`, `gt` and `gte`: a number, or a string compared by its UTF-8 bytes.
public enum FilterBound: Sendable, Hashable {
    /// Matches numbers only, compared by value.
    case number(Double)
    /// Matches strings only, compared by their UTF-8 bytes.
    case string(String)

    /// Equal when of the same kind and value: strings byte for byte, numbers by value.
    public static func == (lhs: FilterBound, rhs: FilterBound) -> Bool {
        FilterOrder.compare(lhs, rhs) == 0
    }

    /// Hashes what ``==(_:_:)`` compares (`-0` as `0`).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .number(let value):
            hasher.combine(0)
            hasher.combine(value == 0 ? 0 : (value.isNaN ? .nan : value))
        case .string(let text):
            hasher.combine(1)
            FilterOrder.hashBytes(of: text, into: &hasher)
        }
    }
}
