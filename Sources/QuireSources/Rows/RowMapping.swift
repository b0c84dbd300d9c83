public import QuireCore

/// A source's configuration fitted to its table's columns, once per Relation message: turns each row, PostgreSQL's
/// text of its values, into Quire's terms (``RowTerms``), or says why it is left out (``SkippedRow``).
///
/// A row is an array of the relation's values, in its columns' order: a value's text, or `nil` for NULL. Only the
/// columns the source names are read: no other column's value reaches an item.
public struct RowMapping: Sendable {
    public let source: SourceConfiguration
    public let limits: ListLimits

    /// A column's place in the row and its type.
    struct Slot: Sendable {
        let name: String
        let index: Int
        let type: PostgresType
    }

    let list: Slot?
    let section: Slot
    let order: [Slot]
    let type: Slot?
    let data: [Slot]
    let key: [Slot]
    /// Per value of an item key: the order terms' directions, then the key's parts, ascending.
    let descending: [Bool]
    /// The relation's number of columns: every row has one value for each.
    let width: Int
    /// The columns that place a row, each once: list, section, order, type, then the key's (made once: every row's
    /// place is recorded and read back with them).
    let placingSlots: [Slot]

    /// The mapping of `source`'s rows in `relation`.
    ///
    /// - Throws: ``SourceConfigurationError`` naming the key whose column the relation lacks, or `table` when it
    ///   has no primary key: what a schema change that drops a column the source reads stops the source with.
    public init(
        source: SourceConfiguration, relation: SourceRelation, limits: ListLimits = ListLimits()
    ) throws(SourceConfigurationError) {
        func slot(_ name: String, key: String) throws(SourceConfigurationError) -> Slot {
            guard let index = relation.columns.firstIndex(where: { $0.name == name }) else {
                throw SourceConfigurationError(
                    source: source.name, key: key, reason: "no column \(name) in \(source.table)")
            }
            return Slot(name: name, index: index, type: relation.columns[index].type)
        }
        guard !relation.primaryKey.isEmpty else {
            throw SourceConfigurationError(
                source: source.name, key: "table", reason: "\(source.table) has no primary key")
        }
        self.source = source
        self.limits = limits
        list = try source.list.column.map { (column) throws(SourceConfigurationError) in try slot(column, key: "list") }
        section = try slot(source.section, key: "section")
        var order: [Slot] = []
        for term in source.order { order.append(try slot(term.column, key: "order")) }
        self.order = order
        type = try source.type.column.map { (column) throws(SourceConfigurationError) in try slot(column, key: "type") }
        var data: [Slot] = []
        for column in source.data { data.append(try slot(column, key: "data")) }
        self.data = data
        var key: [Slot] = []
        for column in relation.primaryKey { key.append(try slot(column, key: "table")) }
        self.key = key
        width = relation.columns.count
        descending = source.order.map { $0.direction == .descending } + key.map { _ in false }
        var seen: Set<Int> = []
        placingSlots = ([list, section].compactMap { $0 } + order + [type].compactMap { $0 } + key).filter {
            seen.insert($0.index).inserted
        }
    }

    /// The row's list, item and section, or why it is left out.
    ///
    /// - Parameter row: the relation's values, in its columns' order (one for each of its columns: anything else is
    ///   a programming error, and traps).
    /// - Complexity: O(*n*) in the size of the values read.
    public func terms(of row: [String?]) -> Result<RowTerms, SkippedRow> {
        let placing: Placing
        switch self.placing(of: row) {
        case .success(let made): placing = made
        case .failure(let skipped): return .failure(skipped)
        }
        func skip(_ reason: SkippedRow.Reason) -> Result<RowTerms, SkippedRow> {
            .failure(SkippedRow(source: source.name, itemID: placing.id, reason: reason))
        }
        var members: [String: JSONValue] = [:]
        for slot in data { members[slot.name] = PostgresValue.json(row[slot.index], type: slot.type) }
        let data = JSONValue.object(members)
        let dataBytes = JSONWriter.encode(data).count
        guard dataBytes <= limits.maxDataBytes else { return skip(.dataTooLarge(bytes: dataBytes)) }
        let headerData = header(ofSection: placing.section)
        let headerBytes = JSONWriter.encode(headerData).count
        guard headerBytes <= limits.maxDataBytes else { return skip(.headerTooLarge(bytes: headerBytes)) }
        return .success(
            RowTerms(
                list: placing.list, item: SourceItem(id: placing.id, type: placing.type, data: data),
                section: SourceSection(id: placing.section, header: ["type": "section", "data": headerData]),
                itemKey: itemKey(of: row), sectionKey: sectionKey(of: row)))
    }

    /// What the placing columns of a row decide: its id, list, section and type, each checked as ``terms(of:)``
    /// checks it.
    struct Placing {
        let id: String
        let list: String
        let section: String
        let type: String
    }

    func placing(of row: [String?]) -> Result<Placing, SkippedRow> {
        precondition(row.count == width, "a row of \(row.count) values for a relation of \(width) columns")
        let id: String
        switch itemID(of: row) {
        case .success(let made): id = made
        case .failure(let skipped): return .failure(skipped)
        }
        func skip(_ reason: SkippedRow.Reason) -> Result<Placing, SkippedRow> {
            .failure(SkippedRow(source: source.name, itemID: id, reason: reason))
        }
        let list: String
        switch listName(of: row) {
        case .success(let name): list = name
        case .failure(let skipped): return .failure(SkippedRow(source: source.name, itemID: id, reason: skipped.reason))
        }
        guard let sectionID = row[section.index] else { return skip(.sectionColumnNull(column: section.name)) }
        guard Self.isValidID(sectionID, maximumBytes: limits.maxIDLength) else {
            return skip(.invalidSectionID(bytes: sectionID.utf8.count))
        }
        let itemType: String
        switch source.type {
        case .constant(let constant):
            itemType = constant
        case .column(let column):
            guard let text = row[type!.index] else { return skip(.typeColumnNull(column: column)) }
            guard Self.isValidID(text, maximumBytes: limits.maxTypeLength) else {
                return skip(.invalidType(bytes: text.utf8.count))
            }
            itemType = text
        }
        return .success(Placing(id: id, list: list, section: sectionID, type: itemType))
    }

    /// The data of a section's header: its section column's value.
    func header(ofSection id: String) -> JSONValue {
        [section.name: PostgresValue.json(id, type: section.type)]
    }

    /// Whether the header of section `id` is larger than the lists' limit (as ``terms(of:)`` checks it), encoded only
    /// when it could be: its JSON takes at most six bytes for each byte of the column's name and value (an escaped
    /// control character), and its punctuation.
    func headerIsTooLarge(ofSection id: String) -> Bool {
        guard 6 * (section.name.utf8.count + id.utf8.count) + 8 > limits.maxDataBytes else { return false }
        return JSONWriter.encode(header(ofSection: id)).count > limits.maxDataBytes
    }

    /// The list the row is in: the template's prefix and the list column's text.
    ///
    /// - Complexity: O(*n*) in the length of the name.
    public func listName(of row: [String?]) -> Result<String, SkippedRow> {
        guard let list else { return .success(source.list.prefix) }
        guard let text = row[list.index] else {
            return .failure(SkippedRow(source: source.name, itemID: nil, reason: .listColumnNull(column: list.name)))
        }
        let name = source.list.prefix + text
        guard ListName.isValid(name) else {
            return .failure(SkippedRow(source: source.name, itemID: nil, reason: .invalidListName(name)))
        }
        return .success(name)
    }

    /// The row's item id: its primary key's text. A composite key's parts are joined by `:`; in every part but the
    /// last, `%` is written `%25` and `:` is written `%3A`, so that two keys never make one id (`a:b` and `c` against
    /// `a` and `b:c`). A one-column key, and a composite key whose parts hold neither, are their text as it is.
    ///
    /// `row` may be a key tuple of a delete (NULL for the columns outside the key).
    ///
    /// - Complexity: O(*n*) in the length of the key's text.
    public func itemID(of row: [String?]) -> Result<String, SkippedRow> {
        var id = ""
        for (position, slot) in key.enumerated() {
            guard let text = row[slot.index] else {
                return .failure(SkippedRow(source: source.name, itemID: nil, reason: .keyColumnNull(column: slot.name)))
            }
            if position == key.count - 1 {
                id += text
                continue
            }
            for character in text {
                switch character {
                case "%": id += "%25"
                case ":": id += "%3A"
                default: id.append(character)
                }
            }
            id += ":"
        }
        guard Self.isValidID(id, maximumBytes: limits.maxIDLength) else {
            return .failure(
                SkippedRow(
                    source: source.name, itemID: id.isEmpty ? nil : id, reason: .invalidItemID(bytes: id.utf8.count)))
        }
        return .success(id)
    }

    /// The row's place in its section: its `order` values, then its key's parts.
    ///
    /// - Complexity: O(*n*) in the length of the values' text.
    public func itemKey(of row: [String?]) -> ItemOrderKey {
        let values = (order + key).map { SortValue(row[$0.index], type: $0.type) }
        return ItemOrderKey(values: values, descending: descending)
    }

    /// The place of the row's section among its list's sections.
    ///
    /// - Complexity: O(*n*) in the length of the section value's text.
    public func sectionKey(of row: [String?]) -> SectionOrderKey {
        SectionOrderKey(
            value: SortValue(row[section.index], type: section.type), descending: source.sectionOrder == .descending)
    }

    /// Whether `id` may be an id (or a type) of a list: 1 to `maximumBytes` bytes, no NUL.
    static func isValidID(_ id: String, maximumBytes: Int) -> Bool {
        !id.isEmpty && id.utf8.count <= maximumBytes && !id.utf8.contains(0)
    }
}
