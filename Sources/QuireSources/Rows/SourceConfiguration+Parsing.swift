public import QuireCore

/// Reading `sources:` from the configuration file, given as ``JSONValue`` (strings for YAML's scalars, arrays for
/// its sequences, objects for its mappings), so that this module reads no YAML itself.
extension SourceConfiguration {
    /// Every source of `sources:`, each checked, then checked together: two sources may not share a name, nor make
    /// the same list.
    ///
    /// - Parameters:
    ///   - value: the value of `sources:`; `nil` or `null` when the file has none.
    ///   - environment: the process environment, for `QUIRE_SOURCES_<NAME>_URL`.
    ///   - limits: the lists' limits, which a constant `type` must keep.
    /// - Throws: ``SourceConfigurationError`` naming the first source and key that cannot work.
    /// - Complexity: O(*n*²) in the number of sources (each pair of list templates is compared).
    public static func all(
        in value: JSONValue?, environment: [String: String], limits: ListLimits = ListLimits()
    ) throws(SourceConfigurationError) -> [SourceConfiguration] {
        guard let value, !value.isNull else { return [] }
        guard let entries = value.arrayValue else {
            throw SourceConfigurationError(
                source: "", key: nil, reason: "expected a list of sources (- name: …), found \(article(value))")
        }
        var sources: [SourceConfiguration] = []
        for (index, entry) in entries.enumerated() {
            let source = try SourceConfiguration(entry: entry, index: index, environment: environment, limits: limits)
            if sources.contains(where: { $0.name == source.name }) {
                throw SourceConfigurationError(
                    source: source.name, key: "name", reason: "two sources are named \(source.name)")
            }
            if let other = sources.first(where: { $0.list.overlaps(source.list) }) {
                throw SourceConfigurationError(
                    source: source.name, key: "list",
                    reason: "\"\(source.list)\" can make the same list names as sources[\(other.name)].list "
                        + "\"\(other.list)\": a list is kept from one source")
            }
            sources.append(source)
        }
        return sources
    }

    /// The source of one entry of `sources:`.
    ///
    /// - Parameters:
    ///   - entry: the entry, a mapping of the keys in ``keys``.
    ///   - index: its place in `sources:`, from 0, which names it while it has no valid name.
    ///   - environment: the process environment: `QUIRE_SOURCES_<NAME>_URL`, when set and not empty, is the URL.
    ///   - limits: the lists' limits, which a constant `type` must keep.
    /// - Throws: ``SourceConfigurationError`` naming the source and the key.
    public init(
        entry: JSONValue, index: Int, environment: [String: String], limits: ListLimits = ListLimits()
    ) throws(SourceConfigurationError) {
        let place = "#\(index + 1)"
        guard let members = entry.objectValue else {
            throw SourceConfigurationError(
                source: place, key: nil,
                reason: "expected a mapping of keys (name, table, …), found \(Self.article(entry))")
        }
        let reader = EntryReader(source: place, members: members)
        let name = try reader.string("name", example: "name: inbox")
        guard Self.isValidName(name) else {
            throw SourceConfigurationError(
                source: place, key: "name",
                reason: "\"\(name)\" is not [a-z0-9_]{1,32} (it names the publication and the slot, quire_<name>)")
        }
        let entry = EntryReader(source: name, members: members)
        if let unknown = members.keys.filter({ !Self.keys.contains($0) }).min() {
            throw entry.error(unknown, "unknown key; a source's keys are \(Self.keys.joined(separator: ", "))")
        }
        self.init(
            name: name,
            url: try Self.url(entry, environment: environment),
            table: try Self.table(try entry.string("table", example: "table: public.messages"), entry),
            list: try Self.listTemplate(try entry.string("list", example: "list: \"inbox-{owner}\""), entry),
            section: try entry.column(try entry.string("section", example: "section: folder"), key: "section"),
            sectionOrder: try Self.direction(entry),
            order: try Self.order(entry),
            type: try Self.typeTemplate(try entry.string("type", example: "type: message"), entry, limits: limits),
            data: try Self.data(entry))
    }

    /// `[a-z0-9_]{1,32}`.
    public static func isValidName(_ name: String) -> Bool {
        (1...32).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || $0 == UInt8(ascii: "_")
            }
    }

    private static func url(_ entry: EntryReader, environment: [String: String]) throws(SourceConfigurationError)
        -> String
    {
        let variable = urlVariable(for: entry.source)
        let url: String
        if let value = environment[variable], !value.isEmpty {
            url = value
        } else if let value = try entry.optionalString("url"), !value.isEmpty {
            url = value
        } else {
            throw entry.error(
                "url", "not set: give it here (postgres://user:password@host:port/database) or in \(variable)")
        }
        guard SourceURL.isAccepted(url) else {
            throw entry.error(
                "url", "not a postgres:// or postgresql:// URL (libpq's key=value form is not accepted)")
        }
        return url
    }

    private static func table(_ text: String, _ entry: EntryReader) throws(SourceConfigurationError) -> TableName {
        let form = "is not \"schema.table\" or \"table\" (a name with a space, a dot or a quote in double quotes)"
        guard let first = Identifier.read(text[...]) else { throw entry.error("table", "\"\(text)\" \(form)") }
        var parts = [first.name]
        var rest = first.rest
        if rest.first == "." {
            guard let second = Identifier.read(rest.dropFirst()) else {
                throw entry.error("table", "\"\(text)\" \(form)")
            }
            parts.append(second.name)
            rest = second.rest
        }
        guard rest.isEmpty else { throw entry.error("table", "\"\(text)\" \(form)") }
        for part in parts {
            if let problem = Identifier.problem(part) { throw entry.error("table", "\"\(part)\" \(problem)") }
        }
        return parts.count == 2 ? TableName(schema: parts[0], name: parts[1]) : TableName(name: parts[0])
    }

    private static func listTemplate(_ text: String, _ entry: EntryReader) throws(SourceConfigurationError)
        -> ListTemplate
    {
        let shape = "a list is a constant name, or a literal prefix and one {column} at its end"
        guard let open = text.firstIndex(of: "{") else {
            guard ListName.isValid(text) else {
                throw entry.error("list", "\"\(text)\" is not a list name ([A-Za-z0-9._-]{1,128})")
            }
            return ListTemplate(prefix: text)
        }
        let prefix = String(text[..<open])
        guard let close = text[open...].firstIndex(of: "}") else {
            throw entry.error("list", "\"\(text)\" opens { without closing it: \(shape)")
        }
        let column = String(text[text.index(after: open)..<close])
        guard text.index(after: close) == text.endIndex else {
            throw entry.error("list", "\"\(text)\" has text after {\(column)}: \(shape)")
        }
        guard !column.contains("{") else { throw entry.error("list", "\"\(text)\" nests braces: \(shape)") }
        guard prefix.isEmpty || ListName.isValid(prefix), prefix.utf8.count < ListName.maximumBytes else {
            throw entry.error(
                "list", "the prefix \"\(prefix)\" is not the start of a list name ([A-Za-z0-9._-]{1,128})")
        }
        return ListTemplate(prefix: prefix, column: try entry.column(column, key: "list"))
    }

    private static func direction(_ entry: EntryReader) throws(SourceConfigurationError) -> SortDirection {
        guard let text = try entry.optionalString("sectionOrder") else { return .ascending }
        guard let direction = SortDirection(rawValue: text.lowercased()) else {
            throw entry.error("sectionOrder", "\"\(text)\" is not asc or desc")
        }
        return direction
    }

    private static func order(_ entry: EntryReader) throws(SourceConfigurationError) -> [OrderTerm] {
        var terms: [OrderTerm] = []
        for text in try entry.strings("order") {
            let trimmed = text.drop { $0.isWhitespace }
            guard let (column, rest) = Identifier.read(trimmed) else {
                throw entry.error("order", "\"\(text)\" is not \"column [asc|desc]\"")
            }
            let word = rest.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
            let direction: SortDirection
            if word.isEmpty {
                direction = .ascending
            } else if let given = SortDirection(rawValue: String(word).lowercased()), rest.first?.isWhitespace == true {
                direction = given
            } else {
                throw entry.error("order", "\"\(text)\" is not \"column [asc|desc]\"")
            }
            let name = try entry.column(column, key: "order")
            guard !terms.contains(where: { $0.column == name }) else {
                throw entry.error("order", "\(name) is named twice")
            }
            terms.append(OrderTerm(column: name, direction: direction))
        }
        return terms
    }

    private static func typeTemplate(
        _ text: String, _ entry: EntryReader, limits: ListLimits
    ) throws(SourceConfigurationError) -> TypeTemplate {
        if text.first == "{", text.last == "}", text.count >= 2 {
            let column = String(text.dropFirst().dropLast())
            guard !column.contains("{"), !column.contains("}") else {
                throw entry.error("type", "\"\(text)\" is neither a constant type nor \"{column}\"")
            }
            return .column(try entry.column(column, key: "type"))
        }
        guard !text.contains("{"), !text.contains("}") else {
            throw entry.error("type", "\"\(text)\" is neither a constant type nor \"{column}\"")
        }
        guard !text.isEmpty, text.utf8.count <= limits.maxTypeLength, !text.utf8.contains(0) else {
            throw entry.error("type", "a type is 1 to \(limits.maxTypeLength) bytes (limits.maxTypeLength)")
        }
        return .constant(text)
    }

    private static func data(_ entry: EntryReader) throws(SourceConfigurationError) -> [String] {
        var columns: [String] = []
        for text in try entry.strings("data") {
            let name = try entry.column(text, key: "data")
            guard !columns.contains(name) else { throw entry.error("data", "\(name) is named twice") }
            columns.append(name)
        }
        return columns
    }

    /// "a mapping", "a string": a value's kind as YAML names it, for messages.
    static func article(_ value: JSONValue) -> String {
        switch value {
        case .object: "a mapping"
        case .array: "a list"
        case .null: "nothing"
        default: "a \(value.kindName)"
        }
    }
}

/// The members of one entry, read as the keys of the source `source`.
private struct EntryReader {
    let source: String
    let members: [String: JSONValue]

    func error(_ key: String, _ reason: String) -> SourceConfigurationError {
        SourceConfigurationError(source: source, key: key, reason: reason)
    }

    /// A string member, `nil` when absent or null.
    func optionalString(_ key: String) throws(SourceConfigurationError) -> String? {
        guard let value = members[key], !value.isNull else { return nil }
        guard let text = value.stringValue else {
            throw error(key, "expected a string, found \(SourceConfiguration.article(value))")
        }
        return text
    }

    /// A required string member.
    func string(_ key: String, example: String) throws(SourceConfigurationError) -> String {
        guard let text = try optionalString(key), !text.isEmpty else {
            throw error(key, "missing: every source needs one (\(example))")
        }
        return text
    }

    /// A list of strings, or one string as a list of one; empty when absent.
    func strings(_ key: String) throws(SourceConfigurationError) -> [String] {
        guard let value = members[key], !value.isNull else { return [] }
        if let text = value.stringValue { return [text] }
        guard let elements = value.arrayValue else {
            throw error(key, "expected a list of strings, found \(SourceConfiguration.article(value))")
        }
        var texts: [String] = []
        for element in elements {
            guard let text = element.stringValue else {
                throw error(key, "expected a list of strings, found \(SourceConfiguration.article(element)) in it")
            }
            texts.append(text)
        }
        return texts
    }

    /// `name` as a column's name of the key `key`.
    func column(_ name: String, key: String) throws(SourceConfigurationError) -> String {
        if let problem = Identifier.problem(name) { throw error(key, "the column name \"\(name)\" \(problem)") }
        return name
    }
}
