/// Which top-level items a filtered session shows (openapi.yaml), built from typed values: no JSON by hand.
///
/// ```swift
/// let unread = QuireFilter.field("data.unread").eq(true)
/// let fromPeople = QuireFilter.not(.field("data.from").in(["bot", "system"]))
/// let lunch = QuireFilter.any([.field("data.subject").contains("lunch"), .field("data.priority").gte(2)])
/// let filter = QuireFilter.all([.field("type").eq("message"), unread, fromPeople, lunch])
/// let session = client.session(list: "inbox", options: .init(limit: 30, filter: filter))
/// ```
///
/// A filter is a term (a field and one operator, made by a ``Field``) or ``all(_:)``, ``any(_:)`` and
/// ``not(_:)`` of filters; `&&`, `||` and `!` make the same. The session
/// shows only the items that match, in the list's order: a matching item brings its children, sections
/// without a matching item are left out, and the session's changes, pages and `total` are those of the
/// filtered list. The server checks the limits (at most 32 terms and 4 levels of `all`, `any` and `not`;
/// `in` takes 1 to 100 values, `contains` 1 to 64 bytes): a filter past them is refused with `400
/// invalid-filter`, which reaches ``QuireSession/open()`` as a ``QuireClientError``.
public struct QuireFilter: Sendable, Hashable {
    /// What the filter is: a term, or a combination of filters.
    indirect enum Node: Sendable, Hashable {
        case term(field: String, Operator)
        case all([QuireFilter])
        case any([QuireFilter])
        case not(QuireFilter)
    }

    /// A term's operator and operand, as the grammar names them.
    enum Operator: Sendable, Hashable {
        case eq(Value)
        case ne(Value)
        case `in`([Value])
        case lt(Bound)
        case lte(Bound)
        case gt(Bound)
        case gte(Bound)
        case contains(String)
        case exists(Bool)
    }

    let node: Node

    init(_ node: Node) {
        self.node = node
    }

    /// A field of the items, to make a term of: `id`, `type`, or `data` followed by `.key` segments.
    ///
    /// - Parameter path: `"id"`, `"type"`, or `"data.<key>[.<key>…]"` (`"data.from"`, `"data.author.name"`):
    ///   the member `name` of the member `author` of the item's `data`. The server refuses another path
    ///   (`400 invalid-filter`).
    public static func field(_ path: String) -> Field {
        Field(path: path)
    }

    /// A field of the items' `data`, by its keys: `data("author", "name")` is `field("data.author.name")`.
    ///
    /// - Parameter keys: one key or more, outermost first; none may be empty or contain `.`.
    public static func data(_ keys: String...) -> Field {
        Field(path: (["data"] + keys).joined(separator: "."))
    }

    /// Matches the items that every filter of `filters` matches.
    ///
    /// - Parameter filters: one filter or more (the server refuses an empty `all`).
    public static func all(_ filters: [QuireFilter]) -> QuireFilter {
        QuireFilter(.all(filters))
    }

    /// Matches the items that at least one filter of `filters` matches.
    ///
    /// - Parameter filters: one filter or more (the server refuses an empty `any`).
    public static func any(_ filters: [QuireFilter]) -> QuireFilter {
        QuireFilter(.any(filters))
    }

    /// Matches the items that `filter` does not match (an item without the field `filter` reads included).
    ///
    /// - Parameter filter: the filter to turn around.
    public static func not(_ filter: QuireFilter) -> QuireFilter {
        QuireFilter(.not(filter))
    }

    /// Both filters: an `all` (of the terms of both sides, when a side is an `all` already).
    public static func && (lhs: QuireFilter, rhs: QuireFilter) -> QuireFilter {
        all(lhs.operands(ofAll: true) + rhs.operands(ofAll: true))
    }

    /// Either filter: an `any` (of the terms of both sides, when a side is an `any` already).
    public static func || (lhs: QuireFilter, rhs: QuireFilter) -> QuireFilter {
        any(lhs.operands(ofAll: false) + rhs.operands(ofAll: false))
    }

    /// The filter turned around: a `not`.
    public static prefix func ! (filter: QuireFilter) -> QuireFilter {
        not(filter)
    }

    /// The filters an `all` (or an `any`) of `self` and another would list: its own operands when it is one.
    private func operands(ofAll: Bool) -> [QuireFilter] {
        switch node {
        case .all(let filters) where ofAll: filters
        case .any(let filters) where !ofAll: filters
        default: [self]
        }
    }
}

extension QuireFilter {
    /// A field of the items, which makes a term with one of its operators:
    /// `QuireFilter.field("data.unread").eq(true)`.
    ///
    /// An item that does not have the field matches only ``ne(_:)`` and `exists(false)` (and what
    /// ``QuireFilter/not(_:)`` turns around).
    public struct Field: Sendable, Hashable {
        /// The field's path: `id`, `type` or `data.<key>[.<key>…]`.
        public let path: String

        /// The field of this path (see ``QuireFilter/field(_:)``).
        ///
        /// - Parameter path: `"id"`, `"type"` or `"data.<key>[.<key>…]"`.
        public init(path: String) {
            self.path = path
        }

        private func term(_ op: Operator) -> QuireFilter {
            QuireFilter(.term(field: path, op))
        }

        /// The field's value equals `value` (numbers by value: `1` equals `1.0`; a value of another kind never
        /// does).
        ///
        /// - Parameter value: a string, a number or a boolean.
        public func eq(_ value: Value) -> QuireFilter { term(.eq(value)) }

        /// The field is absent, or its value differs from `value`.
        ///
        /// - Parameter value: a string, a number or a boolean.
        public func ne(_ value: Value) -> QuireFilter { term(.ne(value)) }

        /// The field's value equals one of `values`.
        ///
        /// - Parameter values: 1 to 100 strings, numbers or booleans.
        public func `in`(_ values: [Value]) -> QuireFilter { term(.in(values)) }

        /// The field's value is of the bound's kind and less than it (numbers by value, strings by their
        /// UTF-8 bytes).
        ///
        /// - Parameter bound: a number or a string.
        public func lt(_ bound: Bound) -> QuireFilter { term(.lt(bound)) }

        /// The field's value is of the bound's kind and less than or equal to it.
        ///
        /// - Parameter bound: a number or a string.
        public func lte(_ bound: Bound) -> QuireFilter { term(.lte(bound)) }

        /// The field's value is of the bound's kind and greater than it.
        ///
        /// - Parameter bound: a number or a string.
        public func gt(_ bound: Bound) -> QuireFilter { term(.gt(bound)) }

        /// The field's value is of the bound's kind and greater than or equal to it.
        ///
        /// - Parameter bound: a number or a string.
        public func gte(_ bound: Bound) -> QuireFilter { term(.gte(bound)) }

        /// The field's value is a string that contains `text`, compared case-insensitively (Unicode case
        /// folding): a search box.
        ///
        /// - Parameter text: 1 to 64 bytes of UTF-8.
        public func contains(_ text: String) -> QuireFilter { term(.contains(text)) }

        /// The item has the field (`true`, even when its value is `null`), or has not (`false`).
        ///
        /// - Parameter present: whether the field must be there.
        public func exists(_ present: Bool = true) -> QuireFilter { term(.exists(present)) }
    }

    /// A value a term compares with: a string, a number or a boolean; written as a literal where one is
    /// expected (`.eq(true)`, `.eq("Ada")`, `.in([1, 2])`).
    ///
    /// The server also takes `null`, which the typed client of `openapi.yaml` cannot send: an item whose
    /// field is absent is found with `exists(false)`.
    public enum Value: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
        ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
    {
        /// A string, compared by its UTF-8 bytes.
        case string(String)
        /// A number, compared by value.
        case number(Double)
        /// `true` or `false`.
        case bool(Bool)

        /// A string value.
        public init(stringLiteral value: String) { self = .string(value) }
        /// A number value.
        public init(integerLiteral value: Int) { self = .number(Double(value)) }
        /// A number value.
        public init(floatLiteral value: Double) { self = .number(value) }
        /// A boolean value.
        public init(booleanLiteral value: Bool) { self = .bool(value) }
    }

    /// The bound of ``Field/lt(_:)``, ``Field/lte(_:)``, ``Field/gt(_:)`` and ``Field/gte(_:)``: a number
    /// (compared with numbers) or a string (compared with strings, by their UTF-8 bytes); a literal where one
    /// is expected (`.gte(2)`, `.lt("2024-06-01")`).
    public enum Bound: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
        ExpressibleByFloatLiteral
    {
        /// A number: only numbers compare with it.
        case number(Double)
        /// A string: only strings compare with it, by their UTF-8 bytes (ISO 8601 dates sort as dates).
        case string(String)

        /// A string bound.
        public init(stringLiteral value: String) { self = .string(value) }
        /// A number bound.
        public init(integerLiteral value: Int) { self = .number(Double(value)) }
        /// A number bound.
        public init(floatLiteral value: Double) { self = .number(value) }
    }
}
