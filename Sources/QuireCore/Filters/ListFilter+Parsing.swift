extension ListFilter {
    /// The filter `json` writes, checked against every rule of openapi.yaml, in canonical form.
    ///
    /// - Parameter json: the value of a session's `"filter"` member, or the parsed `filter=` query value.
    /// - Throws: ``FilterError`` naming the first part at fault (members are read in the order of their
    ///   UTF-8 bytes, so the same filter always gets the same error); the term count is checked once the
    ///   whole filter has been read, so its error gives the full count.
    /// - Complexity: O(*n* log *n*) in the size of the filter.
    public init(json: JSONValue) throws(FilterError) {
        var reader = FilterReader()
        let filter = try reader.filter(json, levels: 0)
        guard reader.termCount <= Self.maxTerms else {
            throw FilterError(
                .tooManyTerms, path: "", reason: "too many terms (\(reader.termCount), at most \(Self.maxTerms))")
        }
        self = filter.canonicalized()
    }

    /// The filter written as JSON text: the URL-decoded value of `filter=`.
    ///
    /// - Throws: ``FilterError`` of kind ``FilterError/Kind/invalidJSON`` when `text` is not one JSON value,
    ///   or any error of ``init(json:)``.
    /// - Complexity: O(*n* log *n*) in the length of `text`.
    public init(text: String) throws(FilterError) {
        let json: JSONValue
        do {
            json = try JSONParser().parse(text)
        } catch {
            throw FilterError(.invalidJSON, path: "", reason: "filter is not JSON: \(error.description)")
        }
        try self.init(json: json)
    }
}

/// Reads a filter from JSON, keeping the path of the part being read for errors and counting terms.
struct FilterReader {
    private var path = JSONPath()
    private(set) var termCount = 0

    private static let combinators = ["all", "any", "not"]
    private static let operators = ["eq", "ne", "in", "lt", "lte", "gt", "gte", "contains", "exists"]
    private static let scalarKinds = "a string, number, boolean or null"

    private func error(_ kind: FilterError.Kind, _ reason: String) -> FilterError {
        FilterError(kind, path: path.rendered, reason: reason)
    }

    /// The filter `value` writes; `levels` counts the `all`, `any` and `not` around it.
    mutating func filter(_ value: JSONValue, levels: Int) throws(FilterError) -> ListFilter {
        guard let members = value.objectValue else {
            throw error(.notAFilter, "a filter must be an object, not \(article(value.kindName))")
        }
        let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        guard let combinator = Self.combinators.first(where: { members[$0] != nil }) else {
            return .term(try term(members, keys: keys))
        }
        if let other = keys.first(where: { $0 != combinator }) {
            throw error(.unknownMember, "\(quoted(combinator)) cannot have other members (found \(quoted(other)))")
        }
        guard levels < ListFilter.maxLevels else {
            throw error(
                .tooDeep,
                "\(quoted(combinator)) nests too deep: at most \(ListFilter.maxLevels) levels of all, any and not")
        }
        let operand = members[combinator]!
        if combinator == "not" {
            path.push(combinator)
            defer { path.pop() }
            return .not(try filter(operand, levels: levels + 1))
        }
        guard let elements = operand.arrayValue, !elements.isEmpty else {
            throw error(.invalidValue, "\(quoted(combinator)) must be an array of 1 or more filters")
        }
        var filters: [ListFilter] = []
        filters.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            path.push(combinator)
            path.push(index)
            defer {
                path.pop()
                path.pop()
            }
            filters.append(try filter(element, levels: levels + 1))
        }
        return combinator == "all" ? .all(filters) : .any(filters)
    }

    private mutating func term(_ members: [String: JSONValue], keys: [String]) throws(FilterError) -> FilterTerm {
        if let unknown = keys.first(where: { $0 != "field" && !Self.operators.contains($0) }) {
            throw error(.unknownMember, "unknown member \(quoted(unknown))")
        }
        guard let fieldValue = members["field"] else {
            if keys.isEmpty {
                throw error(.notAFilter, "a filter must be a term ({\"field\": …, <operator>: …}) or all, any or not")
            }
            throw error(.missingMember, "a term needs \"field\"")
        }
        let operators = keys.filter { $0 != "field" }
        guard let name = operators.first else {
            throw error(
                .missingMember, "a term needs one operator besides \"field\": \(Self.operators.joined(separator: ", "))"
            )
        }
        guard operators.count == 1 else {
            throw error(
                .tooManyOperators,
                "a term has exactly one operator, found \(operators.map(quoted).joined(separator: ", "))")
        }
        let field = try self.field(fieldValue)
        let op = try self.op(name, members[name]!)
        termCount += 1
        return FilterTerm(field: field, op: op)
    }

    private func field(_ value: JSONValue) throws(FilterError) -> FilterField {
        guard let path = value.stringValue else {
            throw error(.invalidField, "\"field\" must be a string, not \(article(value.kindName))")
        }
        if let field = FilterField(path: path) { return field }
        if path.utf8.starts(with: "data.".utf8) {
            throw error(.invalidField, "\"field\" \(quoted(path)) has an empty key: write data.<key>[.<key>…]")
        }
        throw error(.invalidField, "\"field\" must be id, type or data.<key>[.<key>…], not \(quoted(path))")
    }

    private func op(_ name: String, _ value: JSONValue) throws(FilterError) -> FilterOp {
        switch name {
        case "eq", "ne":
            guard let scalar = scalar(value) else {
                throw error(
                    .invalidValue, "\(quoted(name)) must be \(Self.scalarKinds), not \(article(value.kindName))")
            }
            return name == "eq" ? .eq(scalar) : .ne(scalar)
        case "in":
            guard let elements = value.arrayValue, (1...ListFilter.maxInValues).contains(elements.count) else {
                let found = value.arrayValue.map { "\($0.count) values" } ?? article(value.kindName)
                throw error(
                    .invalidValue,
                    "\"in\" must be an array of 1 to \(ListFilter.maxInValues) scalars"
                        + " (\(Self.scalarKinds)), not \(found)")
            }
            var scalars: [FilterScalar] = []
            for (index, element) in elements.enumerated() {
                guard let scalar = scalar(element) else {
                    throw error(
                        .invalidValue, "\"in\"[\(index)] must be \(Self.scalarKinds), not \(article(element.kindName))")
                }
                scalars.append(scalar)
            }
            return .in(scalars)
        case "lt", "lte", "gt", "gte":
            let bound: FilterBound
            switch scalar(value) {
            case .number(let number): bound = .number(number)
            case .string(let text): bound = .string(text)
            default:
                throw error(
                    .invalidValue, "\(quoted(name)) must be a number or a string, not \(article(value.kindName))")
            }
            switch name {
            case "lt": return .lt(bound)
            case "lte": return .lte(bound)
            case "gt": return .gt(bound)
            default: return .gte(bound)
            }
        case "contains":
            guard let text = value.stringValue, (1...ListFilter.maxContainsBytes).contains(text.utf8.count) else {
                throw error(.invalidValue, "\"contains\" must be a string of 1 to \(ListFilter.maxContainsBytes) bytes")
            }
            return .containing(text)
        default:
            guard case .bool(let flag) = value else {
                throw error(.invalidValue, "\"exists\" must be true or false, not \(article(value.kindName))")
            }
            return .exists(flag)
        }
    }

    /// The scalar `value` is, numbers as `Double` with `-0` made `0`; `nil` for an array or an object.
    private func scalar(_ value: JSONValue) -> FilterScalar? {
        switch value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .int(let number): .number(Double(number))
        case .double(let number): .number(number + 0)
        // The nearest double: a filter compares numbers as doubles, whatever their text.
        case .decimal(let number): Double(number.text).map { .number($0 + 0) }
        case .string(let text): .string(text)
        case .array, .object: nil
        }
    }

    /// `text` as a JSON string for an error message, cut after 64 characters so that a long value cannot make a
    /// long `detail`.
    private func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        let cut = text.count > 64
        JSONWriter.writeString(cut ? String(text.prefix(64)) + "…" : text, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// "an object", "a string": a JSON kind as the tail of a sentence.
    private func article(_ kind: String) -> String {
        kind == "array" || kind == "object" ? "an \(kind)" : (kind == "null" ? "null" : "a \(kind)")
    }
}
