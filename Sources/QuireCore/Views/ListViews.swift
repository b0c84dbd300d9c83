import Synchronization

// MARK: - View names

/// The names views are kept under, beside the lists' own: a session on a view is a session on the view's name.
public enum ViewName {
    /// The separator of a view's name: no list's name holds it (``PlainName``).
    static let separator: Character = "\u{0}"

    /// The name of the view of `list` through `filter`: the list's name, a NUL, the filter's canonical text.
    public static func of(list: String, filter: ListFilter) -> String {
        "\(list)\(separator)\(filter.canonicalText)"
    }

    /// The name of the view of `list` through the filter whose canonical text is `canonical`.
    public static func of(list: String, canonical: String) -> String {
        "\(list)\(separator)\(canonical)"
    }

    /// The list and the filter's canonical text of a view's name; `nil` for a list's own name.
    public static func split(_ name: String) -> (list: String, filter: String)? {
        guard let index = name.utf8.firstIndex(of: 0) else { return nil }
        return (String(name[..<index]), String(name[name.utf8.index(after: index)...]))
    }

    /// The list a name is about: the list itself, or the view's list. A list's own name is returned as it is,
    /// after a scan of its bytes (on the path of every session answer).
    public static func list(of name: String) -> String {
        guard let index = name.utf8.firstIndex(of: 0) else { return name }
        return String(name[..<index])
    }
}

// MARK: - The views

/// The filtered views of the lists (openapi.yaml): for each list and each distinct filter asked for, the list's
/// matching top-level items as a version chain of their own, shared by every session and page with that filter.
///
/// A view follows its list write by write (``listChanged(_:to:)``), at a cost that follows the change: only the
/// items the list's change log names are matched again. A list's views are indexed by the equality terms of their
/// filters (``ListFilter/indexKeys``), so a write finds the views its items were or will be in without matching
/// them against every view; a filter without such terms is matched on every write of its list. A view is built
/// (one scan of its list) when first asked for, and dropped when nothing pins it for ``idleNanoseconds``.
public final class ListViews: Sendable {
    private struct Entry {
        let filter: ListFilter
        /// The filter prepared for matching many items (once per view, not per item).
        let matcher: FilterMatcher
        let lineage: ViewLineage
        var version: ListVersion
        var lastUse: UInt64
    }

    /// The views of one list, all current with `parent`.
    private struct Views {
        var parent: ListVersion
        var entries: [String: Entry] = [:]
        var byKey: [FilterIndexKey: Set<String>] = [:]
        var fields: Set<FilterField> = []
        /// Views that changed since their sessions were last told (a request may bring the views up to a new
        /// version of the list before the write's observer does: the observer still tells their sessions).
        var untold: Set<String> = []

        mutating func add(_ name: String, _ entry: Entry) {
            entries[name] = entry
            reindex()
        }

        mutating func remove(_ name: String) {
            entries[name] = nil
            untold.remove(name)
            reindex()
        }

        /// The current version of the view `name`, marked used at `now`; `nil` when it is not held.
        mutating func use(_ name: String, at now: UInt64) -> ListVersion? {
            guard let index = entries.index(forKey: name) else { return nil }
            entries.values[index].lastUse = now
            return entries.values[index].version
        }

        /// The index of the filters' equality terms (rebuilt when a view comes or goes: views are few per list).
        private mutating func reindex() {
            byKey = [:]
            fields = []
            for (name, entry) in entries {
                for key in entry.filter.indexKeys ?? [] {
                    byKey[key, default: []].insert(name)
                    fields.insert(key.field)
                }
            }
        }
    }

    private let lists = Mutex<[String: Views]>([:])
    private let clock: @Sendable () -> UInt64
    /// How long a view nothing pins stays (default 60 s).
    public let idleNanoseconds: UInt64
    private let builds = Atomic<Int>(0)
    private let drops = Atomic<Int>(0)
    private let matches = Atomic<Int>(0)
    private let held = Atomic<Int>(0)

    /// - Parameters:
    ///   - idleSeconds: how long a view that no session holds is kept after its last use.
    ///   - clock: nanoseconds of a monotonic clock.
    public init(
        idleSeconds: Double = 60, clock: @escaping @Sendable () -> UInt64 = { MonotonicClock.nanoseconds }
    ) {
        idleNanoseconds = UInt64(idleSeconds * 1e9)
        self.clock = clock
    }

    /// Views held now.
    public var count: Int { held.load(ordering: .relaxed) }
    /// Views built since start (a first build, or a build again after a change that could not be followed).
    public var buildCount: Int { builds.load(ordering: .relaxed) }
    /// Views dropped since start, unused.
    public var dropCount: Int { drops.load(ordering: .relaxed) }
    /// Views a write's items were matched against since start (what the index saves: without it, every write
    /// would match every view of its list).
    public var matchCount: Int { matches.load(ordering: .relaxed) }

    /// The current version of the view of `list` through `filter`, whose current version is `parent`: built on
    /// first use; brought up to `parent` first when the list moved on since the views last followed it.
    ///
    /// - Complexity: O(1) for a view held and current; a first build scans the list.
    public func version(of list: String, filter: ListFilter, parent: ListVersion) -> ListVersion {
        let name = filter.canonicalText
        let now = clock()
        return lists.withLock { lists in
            // In place: a copy of a list's views taken out of the table and written back would copy every view's
            // entry on each call (copy on write), at a cost that grows with the views.
            version(of: name, filter: filter, in: &lists[list, default: Views(parent: parent)], parent: parent, at: now)
        }
    }

    /// Under the table's lock: the view `name` of a list's `views`, brought up to `parent` first, and built
    /// when it is not held.
    private func version(
        of name: String, filter: ListFilter, in views: inout Views, parent: ListVersion, at now: UInt64
    ) -> ListVersion {
        _ = advance(&views, to: parent)
        if let version = views.use(name, at: now) { return version }
        let lineage = ViewLineage()
        let matcher = FilterMatcher(filter)
        let version = build(matcher, of: views.parent, version: max(1, views.parent.version), lineage: lineage)
        views.add(name, Entry(filter: filter, matcher: matcher, lineage: lineage, version: version, lastUse: now))
        held.add(1, ordering: .relaxed)
        return version
    }

    /// The current version of the view of `list` whose filter's canonical text is `canonical` (a session's
    /// ``ViewName``), as ``version(of:filter:parent:)``; the filter is read from its text only when the view is not
    /// held. `nil` when `canonical` is not a filter's text.
    public func version(of list: String, canonical: String, parent: ListVersion) -> ListVersion? {
        let now = clock()
        let held = lists.withLock { lists -> ListVersion? in
            guard let index = lists.index(forKey: list), lists.values[index].entries[canonical] != nil else {
                return nil
            }
            _ = advance(&lists.values[index], to: parent)
            return lists.values[index].use(canonical, at: now)
        }
        if let held { return held }
        guard let filter = try? ListFilter(text: canonical) else { return nil }
        return version(of: list, filter: filter, parent: parent)
    }

    /// Brings every view of `list` to `version`, its list's current version (`nil`: the list is gone, and so are
    /// its views). A version older than the one the views follow is passed over (observers may be told of two
    /// writes of a list out of order).
    ///
    /// `version` is read only when the list has views, under this table's lock: most lists have none, and reading
    /// the list's current version takes the registry's lock, which every write and read takes too.
    ///
    /// - Returns: the names (``ViewName``) of the views that changed, for their sessions to be told.
    @discardableResult
    public func listChanged(_ list: String, to version: @autoclosure () -> ListVersion?) -> [String] {
        lists.withLock { lists in
            guard let index = lists.index(forKey: list) else { return [] }
            guard let version = version() else {
                let views = lists.remove(at: index).value
                held.add(-views.entries.count, ordering: .relaxed)
                return views.entries.keys.map { ViewName.of(list: list, canonical: $0) }
            }
            _ = advance(&lists.values[index], to: version)
            let changed = lists.values[index].untold
            lists.values[index].untold = []
            return changed.map { ViewName.of(list: list, canonical: $0) }
        }
    }

    /// Drops the views that `isPinned` says nothing holds (by their ``ViewName``) and that were not used for
    /// ``idleNanoseconds``.
    public func sweep(isPinned: (String) -> Bool) {
        let now = clock()
        lists.withLock { lists in
            for (list, var views) in lists {
                let idle = views.entries.filter { name, entry in
                    now > entry.lastUse && now - entry.lastUse > idleNanoseconds
                        && !isPinned(ViewName.of(list: list, canonical: name))
                }
                guard !idle.isEmpty else { continue }
                for name in idle.keys { views.remove(name) }
                held.add(-idle.count, ordering: .relaxed)
                drops.add(idle.count, ordering: .relaxed)
                lists[list] = views.entries.isEmpty ? nil : views
            }
        }
    }

    /// A view's first version (or a version built again), numbered `version`.
    private func build(_ matcher: FilterMatcher, of list: ListVersion, version: UInt64, lineage: ViewLineage)
        -> ListVersion
    {
        builds.add(1, ordering: .relaxed)
        return list.filtered(version: version, lineage: lineage) { matcher.matches(FilterItem(encoded: $0.encoded)) }
    }

    /// Brings `views` to `parent`; the canonical texts of the views that changed.
    private func advance(_ views: inout Views, to parent: ListVersion) -> [String] {
        let old = views.parent
        if old.interner === parent.interner && old.version >= parent.version { return [] }
        defer { views.parent = parent }
        // The views each changed top-level item may be in, before or after, by the filters' equality terms.
        var candidates: [String: Set<Int32>] = [:]
        let delta = old.interner === parent.interner ? parent.changeLog.changes(since: old.version) : nil
        if let delta, !views.fields.isEmpty {
            var tops = Set<Int32>()
            for key in delta.items {
                if let top = old.topLevelKey(of: key) { tops.insert(top) }
                if let top = parent.topLevelKey(of: key) { tops.insert(top) }
            }
            for top in tops {
                for node in [old.topLevel(top)?.node, parent.topLevel(top)?.node] {
                    guard let node else { continue }
                    let item = FilterItem(encoded: node.encoded)
                    for field in views.fields {
                        guard let value = item.value(at: field) else { continue }
                        for name in views.byKey[FilterIndexKey(field: field, value: value)] ?? [] {
                            candidates[name, default: []].insert(top)
                        }
                    }
                }
            }
        }
        let sectionsChanged = delta.map { !$0.updatedSections.isEmpty } ?? true
        var changed: [String] = []
        var updated: [(String, ListVersion)] = []
        for (name, entry) in views.entries {
            let only: Set<Int32>? = entry.filter.indexKeys == nil || delta == nil ? nil : candidates[name] ?? []
            if let only, only.isEmpty, !sectionsChanged { continue }
            matches.add(1, ordering: .relaxed)
            let matcher = entry.matcher
            switch entry.version.followingList(
                from: old, to: parent, matches: { matcher.matches(FilterItem(encoded: $0.encoded)) }, only: only)
            {
            case .unchanged:
                continue
            case .next(let next):
                updated.append((name, next))
            case .rebuild:
                updated.append(
                    (name, build(matcher, of: parent, version: entry.version.version + 1, lineage: entry.lineage)))
            }
        }
        // After the walk: a write into the table while iterating it would copy it.
        for (name, version) in updated {
            views.entries[name]?.version = version
            views.untold.insert(name)
            changed.append(name)
        }
        return changed
    }
}
