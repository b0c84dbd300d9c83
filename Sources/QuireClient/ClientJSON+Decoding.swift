/// Reading the change formats out of parsed JSON, with errors that say which member is wrong.
extension ClientJSON {
    func member(_ key: String) throws -> ClientJSON {
        guard let value = self[key] else { throw ChangeError("missing member \"\(key)\"") }
        return value
    }

    func int(_ key: String) throws -> Int {
        guard case .number(let number) = try member(key), let value = Int(exactly: number) else {
            throw ChangeError("\"\(key)\" is not an integer")
        }
        return value
    }

    func string(_ key: String) throws -> String {
        guard let value = try member(key).stringValue else { throw ChangeError("\"\(key)\" is not a string") }
        return value
    }

    func array(_ key: String) throws -> [ClientJSON] {
        guard case .array(let elements) = try member(key) else { throw ChangeError("\"\(key)\" is not an array") }
        return elements
    }

    func path(_ key: String) throws -> [Int] {
        try array(key).map { element in
            guard case .number(let number) = element, let value = Int(exactly: number) else {
                throw ChangeError("\"\(key)\" is not an index path")
            }
            return value
        }
    }
}

extension ClientJSON {
    /// Parses JSON text.
    ///
    /// - Throws: ``ChangeError`` with the byte offset of the first problem.
    public init(parsing bytes: some Collection<UInt8>) throws {
        self = try ClientJSONParser.parse(Array(bytes))
    }
}

extension ClientSection {
    /// A section from its JSON (the page shape: `id`, `header`, `footer`, `items`).
    ///
    /// - Throws: ``ChangeError`` naming a missing or mistyped member.
    public init(json: ClientJSON) throws {
        self.init(
            id: try json.string("id"), header: json["header"] ?? .null, footer: json["footer"] ?? .null,
            items: try json.array("items"))
    }
}

extension BatchChanges {
    /// A batch from its JSON.
    ///
    /// - Throws: ``ChangeError`` naming a missing or mistyped member.
    public init(json: ClientJSON) throws {
        deleteSections = try json.path("deleteSections")
        insertSections = try json.array("insertSections").map {
            SectionInsert(index: try $0.int("index"), section: try ClientSection(json: try $0.member("section")))
        }
        moveSections = try json.array("moveSections").map {
            SectionMove(from: try $0.int("from"), to: try $0.int("to"))
        }
        deleteItems = try json.array("deleteItems").map { element in
            guard case .array(let parts) = element else { throw ChangeError("deleteItems holds a non-path") }
            return try parts.map { part in
                guard case .number(let number) = part, let value = Int(exactly: number) else {
                    throw ChangeError("deleteItems holds a non-path")
                }
                return value
            }
        }
        insertItems = try json.array("insertItems").map { ItemAt(at: try $0.path("at"), item: try $0.member("item")) }
        moveItems = try json.array("moveItems").map { ItemMove(from: try $0.path("from"), to: try $0.path("to")) }
        counts = try json.path("counts")
        updateItems = try json.array("updateItems").map { ItemAt(at: try $0.path("at"), item: try $0.member("item")) }
        updateSections = try json.array("updateSections").map {
            SectionUpdate(index: try $0.int("index"), header: $0["header"] ?? .null, footer: $0["footer"] ?? .null)
        }
    }
}

extension SequentialOp {
    /// One sequential op from its JSON.
    ///
    /// - Throws: ``ChangeError`` naming a missing or mistyped member.
    public init(json: ClientJSON) throws {
        switch try json.string("op") {
        case "deleteSection": self = .deleteSection(index: try json.int("index"), id: try json.string("id"))
        case "insertSection":
            self = .insertSection(
                index: try json.int("index"), section: try ClientSection(json: try json.member("section")))
        case "moveSection":
            self = .moveSection(from: try json.int("from"), to: try json.int("to"), id: try json.string("id"))
        case "deleteItem": self = .deleteItem(at: try json.path("at"), id: try json.string("id"))
        case "insertItem": self = .insertItem(at: try json.path("at"), item: try json.member("item"))
        case "moveItem":
            self = .moveItem(from: try json.path("from"), to: try json.path("to"), id: try json.string("id"))
        case "updateItem": self = .updateItem(at: try json.path("at"), item: try json.member("item"))
        case "updateSection":
            self = .updateSection(
                index: try json.int("index"), id: try json.string("id"), header: json["header"] ?? .null,
                footer: json["footer"] ?? .null)
        case let name: throw ChangeError("unknown op \"\(name)\"")
        }
    }
}
