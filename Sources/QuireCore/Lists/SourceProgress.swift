/// What a source's follower (a producer reading the app's own database, API.md §2b) records beside the lists it
/// writes, in the same transaction of the store: how far it has applied its database's log, and where each row it
/// placed is. So after a crash the follower goes on from the last transaction the store holds, never one applied
/// twice nor one lost, and finds the list and order of a row whose change carries only its key.
public struct SourceProgress: Sendable {
    /// A row's place as the follower records it: its item's id and the follower's own text of where it is (the
    /// values that name its list and order it), or `nil` when the row is gone.
    public struct Row: Sendable, Hashable {
        public var id: String
        public var place: String?

        public init(id: String, place: String?) {
            self.id = id
            self.place = place
        }
    }

    /// The source's name.
    public var source: String
    /// The position of the log applied through (a commit's end), or `nil` to keep the one stored (a copy under way
    /// records its rows list by list, and its position once it is whole).
    public var position: UInt64?
    /// Every row of the source recorded before is forgotten first, and its position is this one (a copy of the table
    /// begins: until it is whole, the store holds no position).
    public var replacesRows: Bool
    /// The rows placed or removed, in order (a row may come more than once: the last place stands).
    public var rows: [Row]

    public init(source: String, position: UInt64?, replacesRows: Bool = false, rows: [Row] = []) {
        self.source = source
        self.position = position
        self.replacesRows = replacesRows
        self.rows = rows
    }
}

/// A source as its store holds it: the position applied through (`nil` until a copy of its table is whole) and the
/// place of each of its rows, by item id.
public struct SourceState: Sendable, Equatable {
    public var position: UInt64?
    public var rows: [String: String]

    public init(position: UInt64? = nil, rows: [String: String] = [:]) {
        self.position = position
        self.rows = rows
    }

    /// Applies `progress` as a store does.
    public mutating func record(_ progress: SourceProgress) {
        if progress.replacesRows {
            rows = [:]
            position = progress.position
        }
        for row in progress.rows { rows[row.id] = row.place }
        if let position = progress.position { self.position = position }
    }
}

/// A store that keeps no source's progress (``ListStore/keepsSources`` `false`): a follower cannot write through it.
public struct SourcesNotKept: Error, Sendable, CustomStringConvertible {
    public init() {}

    public var description: String {
        "this store does not keep a source's position with its lists: sources are kept on a SQLite file or a "
            + "cluster's PostgreSQL"
    }
}
