/// Turns JSON values into validated drafts, naming the exact path of the first problem.
struct DraftDecoder {
    let limits: ListLimits
    var path = JSONPath()

    init(limits: ListLimits, path: JSONPath = JSONPath()) {
        self.limits = limits
        self.path = path
    }

    /// Decodes `{ "sections": [...] }`.
    mutating func document(_ json: JSONValue) throws(ListValidationError) -> [SectionDraft] {
        guard let object = json.objectValue else { throw path.error(.wrongType, "expected an object") }
        try rejectUnknownMembers(object, allowed: ["sections"])
        guard let sections = object["sections"] else {
            throw path.error(.missingField, at: "sections", "missing field")
        }
        path.push("sections")
        defer { path.pop() }
        return try sectionArray(sections)
    }

    mutating func sectionArray(_ json: JSONValue) throws(ListValidationError) -> [SectionDraft] {
        guard let elements = json.arrayValue else { throw path.error(.wrongType, "expected an array") }
        guard elements.count <= limits.maxSections else {
            throw path.error(.tooMany, "more than \(limits.maxSections) sections")
        }
        var drafts: [SectionDraft] = []
        drafts.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            path.push(index)
            drafts.append(try section(element))
            path.pop()
        }
        return drafts
    }

    mutating func section(_ json: JSONValue) throws(ListValidationError) -> SectionDraft {
        guard let object = json.objectValue else { throw path.error(.wrongType, "expected an object") }
        try rejectUnknownMembers(object, allowed: Self.sectionMembers)
        let id = try identifier(object, key: "id", maxLength: limits.maxIDLength)
        let header = try supplementary(object["header"], key: "header")
        let footer = try supplementary(object["footer"], key: "footer")
        var items: [ItemDraft] = []
        if let itemsJSON = object["items"], !itemsJSON.isNull {
            path.push("items")
            items = try itemArray(itemsJSON, depth: 0)
            path.pop()
        }
        return SectionDraft(id: id, header: header, footer: footer, items: items)
    }

    mutating func itemArray(_ json: JSONValue, depth: Int) throws(ListValidationError) -> [ItemDraft] {
        guard let elements = json.arrayValue else { throw path.error(.wrongType, "expected an array") }
        guard elements.count <= limits.maxItems else {
            throw path.error(.tooMany, "more than \(limits.maxItems) items")
        }
        var drafts: [ItemDraft] = []
        drafts.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            path.push(index)
            drafts.append(try item(element, depth: depth))
            path.pop()
        }
        return drafts
    }

    mutating func item(_ json: JSONValue, depth: Int) throws(ListValidationError) -> ItemDraft {
        guard let object = json.objectValue else { throw path.error(.wrongType, "expected an object") }
        try rejectUnknownMembers(object, allowed: Self.itemMembers)
        let id = try identifier(object, key: "id", maxLength: limits.maxIDLength)
        let type = try identifier(object, key: "type", maxLength: limits.maxTypeLength)
        let data = try encodedData(object["data"] ?? .null, key: "data")
        var children: [ItemDraft]?
        if let childrenJSON = object["children"], !childrenJSON.isNull {
            path.push("children")
            guard depth + 1 <= limits.maxDepth || childrenJSON.arrayValue?.isEmpty == true else {
                throw path.error(.tooDeep, "children deeper than \(limits.maxDepth) levels")
            }
            children = try itemArray(childrenJSON, depth: depth + 1)
            path.pop()
        }
        return ItemDraft(id: id, type: type, data: data, children: children)
    }

    /// A header or footer: absent or `null` is `nil`; otherwise `{ "type": string, "data": any }`.
    mutating func supplementary(_ json: JSONValue?, key: String) throws(ListValidationError) -> [UInt8]? {
        guard let json, !json.isNull else { return nil }
        path.push(key)
        defer { path.pop() }
        guard let object = json.objectValue else { throw path.error(.wrongType, "expected an object or null") }
        try rejectUnknownMembers(object, allowed: ["type", "data"])
        let type = try identifier(object, key: "type", maxLength: limits.maxTypeLength)
        let data = try encodedData(object["data"] ?? .null, key: "data")
        var bytes: [UInt8] = Array("{\"type\":".utf8)
        JSONWriter.writeString(type, into: &bytes)
        bytes.append(contentsOf: ",\"data\":".utf8)
        bytes.append(contentsOf: data)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    static let sectionMembers: Set<String> = ["id", "header", "footer", "items"]
    static let itemMembers: Set<String> = ["id", "type", "data", "children"]

    /// Refuses members other than `allowed`, naming the first unknown one (in sorted order), so that a
    /// misspelt member is an error instead of silently ignored data.
    func rejectUnknownMembers(_ object: [String: JSONValue], allowed: Set<String>) throws(ListValidationError) {
        guard object.count > allowed.count || object.keys.contains(where: { !allowed.contains($0) }) else { return }
        if let unknown = object.keys.filter({ !allowed.contains($0) }).min() {
            throw path.error(.unknownMember, at: unknown, "unknown member")
        }
    }

    /// A required, non-empty string member no longer than `maxLength` UTF-8 bytes.
    func identifier(_ object: [String: JSONValue], key: String, maxLength: Int) throws(ListValidationError)
        -> String
    {
        guard let value = object[key] else { throw path.error(.missingField, at: key, "missing field") }
        guard let string = value.stringValue else {
            throw path.error(.wrongType, at: key, "expected a string, found \(value.kindName)")
        }
        guard !string.isEmpty else { throw path.error(.emptyValue, at: key, "must not be empty") }
        guard string.utf8.count <= maxLength else {
            throw path.error(.tooLong, at: key, "longer than \(maxLength) bytes")
        }
        // NUL ends a C string, and PostgreSQL refuses it in text: an id a store could not keep is refused here,
        // on every store alike (a PostgreSQL write would fail at commit, every time it was sent again).
        guard !string.utf8.contains(0) else {
            throw path.error(.invalidCharacter, at: key, "must not contain the NUL character (\\u0000)")
        }
        return string
    }

    /// A required string member, possibly absent (`nil`).
    func optionalString(_ object: [String: JSONValue], key: String) throws(ListValidationError) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let string = value.stringValue, !string.isEmpty else {
            throw path.error(.wrongType, at: key, "expected a non-empty string")
        }
        return string
    }

    /// The canonical bytes of `data`, checked against ``ListLimits/maxDataBytes``.
    private func encodedData(_ data: JSONValue, key: String) throws(ListValidationError) -> [UInt8] {
        let bytes = JSONWriter.encode(data)
        guard bytes.count <= limits.maxDataBytes else {
            throw path.error(.tooLarge, at: key, "larger than \(limits.maxDataBytes) bytes")
        }
        return bytes
    }
}
