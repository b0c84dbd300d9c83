import Foundation

/// A filter as the generated client sends it: the `Filter` schema of `openapi.yaml`, so that a session's
/// `filter` goes through the same typed encoding as every other member.
extension QuireFilter {
    /// The filter as the generated client's `Filter`.
    var schema: Components.Schemas.Filter {
        switch node {
        case .all(let filters): .FilterAll(.init(all: filters.map(\.schema)))
        case .any(let filters): .FilterAny(.init(any: filters.map(\.schema)))
        case .not(let filter): .FilterNot(.init(not: filter.schema))
        case .term(let field, let op): .FilterTerm(Self.term(field, op))
        }
    }

    private static func term(_ field: String, _ op: Operator) -> Components.Schemas.FilterTerm {
        switch op {
        case .eq(let value): .FilterEqTerm(.init(field: field, eq: value.schema))
        case .ne(let value): .FilterNeTerm(.init(field: field, ne: value.schema))
        case .in(let values): .FilterInTerm(.init(field: field, _in: values.map(\.schema)))
        case .lt(let bound): .FilterLtTerm(.init(field: field, lt: bound.schema))
        case .lte(let bound): .FilterLteTerm(.init(field: field, lte: bound.schema))
        case .gt(let bound): .FilterGtTerm(.init(field: field, gt: bound.schema))
        case .gte(let bound): .FilterGteTerm(.init(field: field, gte: bound.schema))
        case .contains(let text): .FilterContainsTerm(.init(field: field, contains: text))
        case .exists(let present): .FilterExistsTerm(.init(field: field, exists: present))
        }
    }

    /// The filter as JSON text, members in a stable order: the value of `filter=` on a stateless page
    /// (`GET /v1/lists/{list}?filter=…`, URL-encoded), or for a log line.
    ///
    /// - Complexity: O(*n*) in the size of the filter.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding the generated types cannot fail: strings, finite numbers (a literal) and booleans only.
        guard let data = try? encoder.encode(schema) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

extension QuireFilter: Encodable {
    /// Encodes the filter as its JSON (openapi.yaml): a term `{"field": …, <operator>: …}`, or `all`, `any`, `not`.
    ///
    /// - Throws: what the encoder throws (a number that is not finite, for `JSONEncoder`).
    public func encode(to encoder: any Encoder) throws {
        try schema.encode(to: encoder)
    }
}

extension QuireFilter: CustomStringConvertible {
    /// The filter's ``json``.
    public var description: String { json }
}

extension QuireFilter.Value {
    var schema: Components.Schemas.FilterScalar {
        switch self {
        case .string(let text): .case1(text)
        case .number(let number): .case2(number)
        case .bool(let flag): .case3(flag)
        }
    }
}

extension QuireFilter.Bound {
    var schema: Components.Schemas.FilterBound {
        switch self {
        case .number(let number): .case1(number)
        case .string(let text): .case2(text)
        }
    }
}
