extension ListOp {
    /// Decodes an ops body, `{ "ops": [ ... ] }`.
    ///
    /// - Throws: ``OpError`` with the index of the first invalid op and the path inside it.
    /// - Complexity: O(*n*) in the size of the body.
    public static func decodeBatch(_ json: JSONValue, limits: ListLimits = ListLimits()) throws(OpError) -> [ListOp] {
        if let object = json.objectValue, let unknown = object.keys.filter({ $0 != "ops" }).min() {
            throw OpError(
                opIndex: nil, error: ListValidationError(.unknownMember, path: unknown, reason: "unknown member"))
        }
        guard let ops = json["ops"]?.arrayValue else {
            throw OpError(
                opIndex: nil, error: ListValidationError(.missingField, path: "ops", reason: "expected an array of ops")
            )
        }
        var result: [ListOp] = []
        result.reserveCapacity(ops.count)
        for (index, op) in ops.enumerated() {
            do throws(ListValidationError) {
                result.append(try decode(op, limits: limits))
            } catch {
                throw OpError(opIndex: index, error: error)
            }
        }
        return result
    }

    /// The members each op may have.
    static let opMembers: [String: Set<String>] = [
        "insertItems": ["op", "section", "parent", "items", "after", "before"],
        "removeItems": ["op", "ids"],
        "updateItems": ["op", "items"],
        "moveItem": ["op", "id", "section", "parent", "after", "before"],
        "insertSections": ["op", "sections", "after", "before"],
        "removeSections": ["op", "ids"],
        "updateSection": ["op", "id", "header", "footer"],
        "moveSection": ["op", "id", "after", "before"],
    ]

    /// Decodes one op object.
    ///
    /// - Throws: ``ListValidationError`` with a path inside the op.
    /// - Complexity: O(*n*) in the size of the op.
    public static func decode(_ json: JSONValue, limits: ListLimits = ListLimits()) throws(ListValidationError)
        -> ListOp
    {
        var decoder = DraftDecoder(limits: limits)
        guard let object = json.objectValue else { throw decoder.path.error(.wrongType, "expected an op object") }
        guard let name = object["op"]?.stringValue else {
            throw decoder.path.error(.missingField, at: "op", "missing op name")
        }
        if let allowed = opMembers[name] {
            try decoder.rejectUnknownMembers(object, allowed: allowed)
        }
        switch name {
        case "insertItems":
            let items = try decoder.members(object, "items") { (decoder, json) throws(ListValidationError) in
                try decoder.itemArray(json, depth: 0)
            }
            return .insertItems(
                items: items, target: try target(object, decoder), anchor: try anchor(object, decoder))
        case "removeItems":
            return .removeItems(ids: try ids(object, decoder))
        case "updateItems":
            let items = try decoder.members(object, "items") { (decoder, json) throws(ListValidationError) in
                try decoder.itemArray(json, depth: 0)
            }
            return .updateItems(items: items)
        case "moveItem":
            return .moveItem(
                id: try decoder.identifier(object, key: "id", maxLength: limits.maxIDLength),
                target: try target(object, decoder), anchor: try anchor(object, decoder))
        case "insertSections":
            let sections = try decoder.members(object, "sections") { (decoder, json) throws(ListValidationError) in
                try decoder.sectionArray(json)
            }
            return .insertSections(sections: sections, anchor: try anchor(object, decoder))
        case "removeSections":
            return .removeSections(ids: try ids(object, decoder))
        case "updateSection":
            return .updateSection(
                id: try decoder.identifier(object, key: "id", maxLength: limits.maxIDLength),
                header: try change(object, "header", &decoder), footer: try change(object, "footer", &decoder))
        case "moveSection":
            return .moveSection(
                id: try decoder.identifier(object, key: "id", maxLength: limits.maxIDLength),
                anchor: try anchor(object, decoder))
        default:
            throw decoder.path.error(.invalidOp, at: "op", "unknown op \"\(name)\"")
        }
    }

    private static func anchor(_ object: [String: JSONValue], _ decoder: DraftDecoder) throws(ListValidationError)
        -> Anchor
    {
        let after = try decoder.optionalString(object, key: "after")
        let before = try decoder.optionalString(object, key: "before")
        switch (after, before) {
        case (nil, nil): return .end
        case (let after?, nil): return .after(after)
        case (nil, let before?): return .before(before)
        case (_?, _?): throw decoder.path.error(.invalidAnchor, at: "before", "give either after or before, not both")
        }
    }

    private static func target(_ object: [String: JSONValue], _ decoder: DraftDecoder) throws(ListValidationError)
        -> Target?
    {
        let section = try decoder.optionalString(object, key: "section")
        let parent = try decoder.optionalString(object, key: "parent")
        switch (section, parent) {
        case (nil, nil): return nil
        case (let section?, nil): return .section(section)
        case (nil, let parent?): return .parent(parent)
        case (_?, _?): throw decoder.path.error(.invalidAnchor, at: "parent", "give either section or parent, not both")
        }
    }

    private static func ids(_ object: [String: JSONValue], _ decoder: DraftDecoder) throws(ListValidationError)
        -> [String]
    {
        guard let value = object["ids"] else { throw decoder.path.error(.missingField, at: "ids", "missing field") }
        guard let elements = value.arrayValue else {
            throw decoder.path.error(.wrongType, at: "ids", "expected an array of ids")
        }
        var ids: [String] = []
        for (index, element) in elements.enumerated() {
            guard let id = element.stringValue, !id.isEmpty else {
                var path = decoder.path
                path.push("ids")
                path.push(index)
                throw path.error(.wrongType, "expected a non-empty string")
            }
            ids.append(id)
        }
        return ids
    }

    private static func change(_ object: [String: JSONValue], _ key: String, _ decoder: inout DraftDecoder)
        throws(ListValidationError) -> SupplementaryChange
    {
        guard let value = object[key] else { return .keep }
        return .set(try decoder.supplementary(value, key: key))
    }
}

extension DraftDecoder {
    /// Decodes the required member `key` with `body`, with the path pointing inside it.
    mutating func members<T>(
        _ object: [String: JSONValue], _ key: String,
        _ body: (inout DraftDecoder, JSONValue) throws(ListValidationError) -> T
    ) throws(ListValidationError) -> T {
        guard let value = object[key] else { throw path.error(.missingField, at: key, "missing field") }
        path.push(key)
        defer { path.pop() }
        return try body(&self, value)
    }
}
