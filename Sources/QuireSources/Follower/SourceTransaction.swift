import QuireCore

/// One transaction of a source's table (or a part of its first copy) turned into one write per list it touches:
/// each row change becomes ops on that list's version as the transaction has made it so far, placed by binary
/// search among the rows placed before it (their keys from the ``RowIndex``, overlaid with this transaction's).
///
/// Each list's ops are applied to a draft of its next version as they are made (``ListVersionDraft``: the version
/// read between them, one version made of them all), and the registry takes that version as it is when the list is
/// still at the version it was built on, instead of decoding and applying the ops again.
///
/// Nothing is changed outside but the row index: ``finished(position:)``'s writes and progress are committed
/// together, and its ``Finished/apply()`` updates the index as it joins its batch.
struct SourceTransaction {
    let source: String
    let index: RowIndex
    let limits: ListLimits
    /// Reads a list's version before the transaction (the registry's, loaded when needed).
    let current: (String) throws -> ListVersion?
    /// Whether a list's version before the transaction is one the registry holds or will (numbered as its own),
    /// rather than one an earlier transaction of the batch made of a list it created (which the registry numbers
    /// itself): only on such a version is the version made handed to the registry.
    let isNumbered: (String) -> Bool
    /// The place of a section among its list's sections, from its id (``RowMapping/sectionKey(ofSection:)``).
    let sectionKey: (String) -> SectionOrderKey

    /// A list's draft and ops: a class, so that reading or growing it costs no copy of the draft's versions (a
    /// version is a handful of references, each retained by a copy).
    private final class Working {
        var draft: ListVersionDraft
        let isNew: Bool
        let isNumbered: Bool
        var ops: [JSONValue] = []

        init(draft: ListVersionDraft, isNew: Bool, isNumbered: Bool) {
            self.draft = draft
            self.isNew = isNew
            self.isNumbered = isNumbered
        }

        var version: ListVersion { draft.current }
    }

    private var lists: [String: Working] = [:]
    private var listOrder: [String] = []
    /// This transaction's places, over the index's (`nil`: the row is gone).
    private var placed: [String: RowPlace?] = [:]
    private var placedOrder: [String] = []
    /// The rows in `placedOrder`: `placed` holds an inserted row before it is noted (later rows compare with it).
    private var noted: Set<String> = []
    /// Every row of the source was removed first (a `TRUNCATE`).
    private(set) var truncated = false
    /// Row changes applied, by kind (`insert`, `update`, `delete`).
    private(set) var rowCounts: [String: Int] = [:]

    init(
        source: String, index: RowIndex, limits: ListLimits, sectionKey: @escaping (String) -> SectionOrderKey,
        current: @escaping (String) throws -> ListVersion?, isNumbered: @escaping (String) -> Bool
    ) {
        self.isNumbered = isNumbered
        self.source = source
        self.index = index
        self.limits = limits
        self.sectionKey = sectionKey
        self.current = current
    }

    // MARK: - Rows

    /// The place of row `id` as of this transaction.
    func place(of id: String) -> RowPlace? {
        // Most transactions are of one row: the overlay is empty, and not hashed into.
        if !placed.isEmpty, let overlaid = placed[id] { return overlaid }
        return truncated ? nil : index.place(of: id)
    }

    /// A row inserted (or an update of a row not placed before: its place is made anew).
    mutating func insert(_ terms: RowTerms, place: RowPlace) throws {
        try add(terms, place: place)
        note(terms.item.id, place)
        rowCounts["insert", default: 0] += 1
    }

    /// A row updated: moved within its list, between lists, or changed where it is.
    mutating func update(
        from old: RowPlace, oldID: String, to terms: RowTerms, place: RowPlace
    ) throws {
        rowCounts["update", default: 0] += 1
        if old.list != terms.list || oldID != terms.item.id {
            try remove(oldID, at: old)
            note(oldID, nil)
            try add(terms, place: place)
            note(terms.item.id, place)
            return
        }
        if old.section != terms.section.id || old.key != terms.itemKey {
            try move(oldID, from: old, to: terms)
        }
        try apply(["op": "updateItems", "items": [terms.item.json]], to: terms.list)
        note(oldID, place)
    }

    /// A row deleted, or left out of the lists after an update (its new values break the lists' limits).
    mutating func delete(_ id: String, at old: RowPlace, counted: Bool = true) throws {
        if counted { rowCounts["delete", default: 0] += 1 }
        try remove(id, at: old)
        note(id, nil)
    }

    /// `TRUNCATE`: every list of the source emptied (each stays, at a new version).
    mutating func truncate() throws {
        var emptied = truncated ? [] : index.lists
        for (_, place) in placed { if let place { emptied.insert(place.list) } }
        for list in emptied.sorted() {
            let working = try self.working(list)
            let version = working.version
            let sections = (0..<version.sectionCount).map { JSONValue.string(version.sectionID(at: $0)) }
            guard !sections.isEmpty else { continue }
            try Self.apply(["op": "removeSections", "ids": .array(sections)], to: working)
        }
        truncated = true
        placed = [:]
        placedOrder = []
        noted = []
    }

    /// The document of item `id` in `list` as this transaction has made it so far (for the values an update left
    /// unchanged).
    mutating func heldItem(_ id: String, in list: String) throws -> JSONValue? {
        try working(list).version.itemDocument(id)
    }

    // MARK: - What is committed

    /// What the transaction made of the lists it touched.
    struct Made {
        /// One write per list touched, in the order first touched: ops on a list that existed (with the version
        /// they make, when built on a numbered one), the whole content of one the transaction creates.
        var writes: [ListRegistry.QueuedWrite] = []
        /// Each list written, at the version made (what a later transaction of the same batch builds on).
        var versions: [String: ListVersion] = [:]
        /// The lists the transaction created, or wrote on a version made of a list created earlier in the batch:
        /// their versions are numbered by the registry.
        var unnumbered: Set<String> = []
    }

    func made() throws -> Made {
        var made = Made()
        for name in listOrder {
            guard let working = lists[name], !working.ops.isEmpty else { continue }
            let next = try working.draft.finished()
            made.versions[name] = next
            if working.isNew {
                let document = (try? JSONParser(keepsNumberText: true).parse(next.documentBytes)) ?? .null
                made.writes.append(ListRegistry.QueuedWrite(name, write: .replace(document)))
                made.unnumbered.insert(name)
                continue
            }
            let write = ListWrite.ops(["ops": .array(working.ops)])
            if working.isNumbered {
                made.writes.append(.made(name, write: write, on: working.draft.base, next: next))
            } else {
                made.writes.append(ListRegistry.QueuedWrite(name, mustExist: true, write: write))
                made.unnumbered.insert(name)
            }
        }
        return made
    }

    /// The transaction done: what joins a batch, without the reads it was built with (``current`` holds the batch
    /// it joins, whose arrays would then be copied whole to add it).
    struct Finished {
        let made: Made
        /// The rows' places to record with the writes, through the transaction's position.
        let progress: SourceProgress
        let rowCounts: [String: Int]
        private let index: RowIndex
        private let places: [(id: String, place: RowPlace?)]

        fileprivate init(_ transaction: SourceTransaction, position: UInt64) throws {
            made = try transaction.made()
            progress = transaction.progress(position: position)
            rowCounts = transaction.rowCounts
            index = transaction.index
            places = transaction.placedOrder.map { ($0, transaction.placed[$0] ?? nil) }
        }

        /// As the transaction joins its batch: the index holds its places (a commit that fails ends the stream, and
        /// the next one reads the index from the store again).
        func apply() {
            if progress.replacesRows { index.removeAll() }
            for (id, place) in places { index.set(id, place) }
        }
    }

    /// The transaction done, through log position `position`.
    func finished(position: UInt64) throws -> Finished {
        try Finished(self, position: position)
    }

    /// The rows' places to record with the writes, through log position `position`.
    private func progress(position: UInt64) -> SourceProgress {
        SourceProgress(
            source: source, position: position, replacesRows: truncated,
            rows: placedOrder.map { SourceProgress.Row(id: $0, place: (placed[$0] ?? nil)?.recorded) })
    }

    // MARK: - Ops

    private mutating func note(_ id: String, _ place: RowPlace?) {
        placed[id] = .some(place)
        if noted.insert(id).inserted { placedOrder.append(id) }
    }

    private mutating func working(_ list: String) throws -> Working {
        if let working = lists[list] { return working }
        let version = try current(list)
        listOrder.append(list)
        let working = Working(
            draft: ListVersionDraft(version ?? .empty(limits: limits)), isNew: version == nil,
            isNumbered: version != nil && isNumbered(list))
        lists[list] = working
        return working
    }

    private mutating func apply(_ op: JSONValue, to list: String) throws {
        try Self.apply(op, to: try working(list))
    }

    /// `op` decoded as the registry decodes a batch's ops, applied to the list's draft.
    private static func apply(_ op: JSONValue, to working: Working) throws {
        do throws(ListValidationError) {
            try working.draft.apply(ListOp.decode(op, limits: working.draft.base.limits))
        } catch {
            throw ListRegistry.WriteError.invalidOp(OpError(opIndex: working.ops.count, error: error))
        }
        working.ops.append(op)
    }

    /// Inserts the row's item where its keys put it, its section first when the list lacks it.
    private mutating func add(_ terms: RowTerms, place: RowPlace) throws {
        let version = try working(terms.list).version
        let section = terms.section.id
        // The new row's place is known before its op: later rows of the transaction compare with it.
        placed[terms.item.id] = place
        guard version.containsSection(section) else {
            let op = sectionAnchor(for: terms.sectionKey, in: version).adding(
                to: ["op": "insertSections", "sections": [terms.section.json(items: [terms.item])]])
            try apply(op, to: terms.list)
            return
        }
        let op = itemAnchor(for: terms.itemKey, in: section, of: version, excluding: terms.item.id).adding(
            to: ["op": "insertItems", "section": .string(section), "items": [terms.item.json]])
        try apply(op, to: terms.list)
    }

    /// Moves a row's item to where its new keys put it (into a section made for it when the list lacks it); removes
    /// the section it leaves when it was the last there.
    private mutating func move(_ id: String, from old: RowPlace, to terms: RowTerms) throws {
        var version = try working(terms.list).version
        let section = terms.section.id
        if !version.containsSection(section) {
            let op = sectionAnchor(for: terms.sectionKey, in: version).adding(
                to: ["op": "insertSections", "sections": [terms.section.json(items: [])]])
            try apply(op, to: terms.list)
            version = try working(terms.list).version
        }
        let op = itemAnchor(for: terms.itemKey, in: section, of: version, excluding: id).adding(
            to: ["op": "moveItem", "id": .string(id), "section": .string(section)])
        try apply(op, to: terms.list)
        if old.section != section, try working(terms.list).version.topLevelItemCount(inSection: old.section) == 0 {
            try apply(["op": "removeSections", "ids": [.string(old.section)]], to: terms.list)
        }
    }

    /// Removes a row's item, and its section when it was the last there.
    private mutating func remove(_ id: String, at old: RowPlace) throws {
        let version = try working(old.list).version
        guard let section = version.sectionOfTopLevelItem(id) else { return }
        if version.topLevelItemCount(inSection: section) == 1 {
            try apply(["op": "removeSections", "ids": [.string(section)]], to: old.list)
        } else {
            try apply(["op": "removeItems", "ids": [.string(id)]], to: old.list)
        }
    }

    // MARK: - Places by binary search

    private enum Anchor {
        case before(String)
        case after(String)
        case end

        /// `members` with this anchor's member (`before` or `after`) added.
        func adding(to members: [String: JSONValue]) -> JSONValue {
            var members = members
            switch self {
            case .before(let id): members["before"] = .string(id)
            case .after(let id): members["after"] = .string(id)
            case .end: break
            }
            return .object(members)
        }
    }

    /// Where an item of key `key` goes among the items of `section` other than `excluded`: before the first whose
    /// key is greater, else after the last.
    private func itemAnchor(
        for key: ItemOrderKey, in section: String, of version: ListVersion, excluding excluded: String
    )
        -> Anchor
    {
        guard let items = version.topLevelItems(inSection: section) else { return .end }
        let count = items.count
        // The items other than `excluded`, by index: positions at and after its own shift by one.
        let own = version.topLevelItemIndex(of: excluded).flatMap { $0.section == section ? $0.index : nil }
        let others = own == nil ? count : count - 1
        func id(_ position: Int) -> String {
            items.id(at: own.map { position >= $0 ? position + 1 : position } ?? position)
        }
        var low = 0
        var high = others
        while low < high {
            let middle = (low + high) / 2
            if let other = place(of: id(middle)), other.key < key { low = middle + 1 } else { high = middle }
        }
        if low < others { return .before(id(low)) }
        return others > 0 ? .after(id(others - 1)) : .end
    }

    /// Where a new section of key `key` goes: before the first section whose key is greater, else at the end.
    private func sectionAnchor(for key: SectionOrderKey, in version: ListVersion) -> Anchor {
        var low = 0
        var high = version.sectionCount
        while low < high {
            let middle = (low + high) / 2
            if sectionKey(version.sectionID(at: middle)) < key { low = middle + 1 } else { high = middle }
        }
        return low < version.sectionCount ? .before(version.sectionID(at: low)) : .end
    }
}
