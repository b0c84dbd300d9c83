/// The places of a source's rows, by item id, as the store holds them: kept by the follower's thread alone.
///
/// A row is held as the store recorded it until the follower first needs its place (a change of the row, or a
/// comparison of an insert's binary search), then as its place. A restart reads a million rows' records without
/// parsing any, and a copy keeps each row's record (one string) rather than its parsed place: most rows of a big
/// table are not touched for a long while.
final class RowIndex {
    private enum Entry {
        case recorded(String)
        case placed(RowPlace)
    }

    private var entries: [String: Entry]
    /// A record read back with the source's mapping (`nil`: it no longer places a row).
    private let resolve: (String) -> RowPlace?

    /// An index of `recorded` (item id → the store's record of its place), resolved with `resolve`.
    init(recorded: [String: String] = [:], resolve: @escaping (String) -> RowPlace?) {
        // `mapValues` keeps the dictionary's layout: no key is hashed again.
        entries = recorded.mapValues(Entry.recorded)
        self.resolve = resolve
    }

    /// The place of row `id`, or `nil` when the source holds no such row (or its record no longer places one).
    ///
    /// - Complexity: O(1) expected; a row's first call parses its record.
    func place(of id: String) -> RowPlace? {
        guard let entry = entries[id] else { return nil }
        switch entry {
        case .placed(let place):
            return place
        case .recorded(let text):
            guard let place = resolve(text) else {
                entries[id] = nil
                return nil
            }
            entries[id] = .placed(place)
            return place
        }
    }

    /// Row `id` is at `place` now (`nil`: gone).
    func set(_ id: String, _ place: RowPlace?) {
        entries[id] = place.map(Entry.placed)
    }

    /// Row `id` is where the store's record `text` says, resolved when it is needed.
    func set(_ id: String, recorded text: String) {
        entries[id] = .recorded(text)
    }

    /// The lists that hold at least one row.
    ///
    /// - Complexity: O(*n*) in the rows, each record parsed that was not yet: for a `TRUNCATE`, which is O(*n*) in
    ///   any case.
    var lists: Set<String> {
        var lists: Set<String> = []
        for id in Array(entries.keys) {
            if let place = place(of: id) { lists.insert(place.list) }
        }
        return lists
    }

    func removeAll() {
        entries = [:]
    }
}
