import QuireCore
import Synchronization

/// The journal's entries not yet applied (``SQLiteListStore/applyJournal(of:in:)``), in memory: each list's in order,
/// with the write's changes, so that applying them reads nothing back.
///
/// Entries a transaction appends are staged until it ends, then held or forgotten (``settle(committed:)``, which
/// ``GroupCommit`` calls while the connection is still the transaction's): nothing not durable is ever applied, and
/// nothing durable is missed by the journal's low-water mark (``lowWater(after:)``).
final class Journal: Sendable {
    /// One journaled write.
    struct Entry: Sendable {
        let seq: Int64
        let list: String
        let version: Int64
        let sections: Int
        let items: Int
        let isNew: Bool
        let changes: StorageChanges
        /// The size of its row's encoded changes.
        let bytes: Int
    }

    fileprivate struct State {
        var lists: [String: [Entry]] = [:]
        var count = 0
        var bytes = 0
        /// The lists among `lists` whose entries create them: the tables may lack them.
        var creating: Set<String> = []
        /// Every entry held, by sequence number, from `head` on; an entry applied or dropped since stays until it
        /// reaches the front (its list no longer holds it).
        var order: [(seq: Int64, list: String)] = []
        var head = 0
        var staged: [Entry] = []
        /// Lists whose entries through a sequence number the open transaction applies.
        var stagedApplied: [String: Int64] = [:]
    }

    /// When the entries held make an application due, and how many one application takes.
    struct Limits: Sendable {
        /// Entries held that make an application due (``SQLiteListStore/journalLimit``).
        var entries: Int
        /// Bytes of entries held that make an application due, as ``entries``: the entries are held in memory until
        /// applied.
        var bytes = 16 << 20
        /// Entries applied at once when the journal is due (whole lists, about this many): a short pause of the
        /// writer rather than one of the whole journal, shorter than the wait after which a lone producer's writes
        /// go to the writer of batches.
        var chunk = 256

        /// Bytes of entries applied at once when the journal is due, as ``chunk``.
        var chunkBytes: Int { bytes / 16 }
    }

    private let state = Mutex(State())
    private let limits: Limits

    init(limits: Limits) {
        self.limits = limits
    }

    /// Entries held.
    var count: Int { state.withLock { $0.count } }

    /// Entries held and their bytes, read together.
    var held: StoreBacklog {
        state.withLock { StoreBacklog(entries: $0.count, bytes: $0.bytes, limit: limits.entries) }
    }

    /// Whether the entries held reach the limit of their count or of their bytes (``Limits``).
    var isDue: Bool {
        state.withLock { $0.count > 0 && ($0.count >= limits.entries || $0.bytes >= limits.bytes) }
    }

    /// An entry the open transaction appended.
    func stage(_ entry: Entry) {
        state.withLock { $0.staged.append(entry) }
    }

    /// Notes that the open transaction applies the entries of `list` through `seq`.
    func stageApplied(_ list: String, through seq: Int64) {
        state.withLock { $0.stagedApplied[list] = seq }
    }

    /// When their transaction committed, holds the staged entries and forgets those it applied; else forgets what it
    /// staged.
    func settle(committed: Bool) {
        state.withLock { state in
            if committed {
                state.hold(state.staged)
                for (list, seq) in state.stagedApplied { state.forget(list, through: seq) }
            }
            state.staged.removeAll(keepingCapacity: true)
            state.stagedApplied.removeAll(keepingCapacity: true)
        }
    }

    /// Holds `entries`, read from the table in order.
    func hold(_ entries: [Entry]) {
        state.withLock { $0.hold(entries) }
    }

    /// The entries of `list` held, then those the open transaction staged (with `staged`).
    func entries(of list: String, staged: Bool) -> [Entry] {
        state.withLock { state in
            let held = state.lists[list] ?? []
            guard staged else { return held }
            return held + state.staged.filter { $0.list == list }
        }
    }

    /// Whether entries of `list` are held (`nil`: of any list).
    func holds(_ list: String?) -> Bool {
        state.withLock { state in list.map { state.lists[$0] != nil } ?? (state.count > 0) }
    }

    /// The entries of `list`, or of every list for `nil`.
    func entries(of list: String?) -> [String: [Entry]] {
        state.withLock { state in
            guard let list else { return state.lists }
            return state.lists[list].map { [list: $0] } ?? [:]
        }
    }

    /// The entries of the lists whose first entry is oldest: whole lists, about ``Limits/chunk`` entries or
    /// ``Limits/chunkBytes``.
    ///
    /// - Complexity: O(the entries returned), amortized.
    func oldest() -> [String: [Entry]] {
        let (chunk, chunkBytes) = (limits.chunk, limits.chunkBytes)
        return state.withLock { state in
            state.dropForgottenFront()
            var chosen: [String: [Entry]] = [:]
            var (taken, bytes) = (0, 0)
            var index = state.head
            while index < state.order.count, taken < chunk, bytes < chunkBytes {
                let (seq, list) = state.order[index]
                index += 1
                // Lists are taken in the order of their first entry: a later entry of one is taken with it.
                guard chosen[list] == nil, let entries = state.lists[list], entries[0].seq == seq else { continue }
                chosen[list] = entries
                taken += entries.count
                bytes += entries.reduce(0) { $0 + $1.bytes }
            }
            return chosen
        }
    }

    /// The last entry of each of `names` that has entries: its version and sizes as of its last commit.
    func latest(of names: some Sequence<String>) -> [String: Entry] {
        state.withLock { state in
            var latest: [String: Entry] = [:]
            for name in names { latest[name] = state.lists[name]?.last }
            return latest
        }
    }

    /// The last entry of each list an entry creates (which the tables may not hold yet).
    func created() -> [Entry] {
        state.withLock { state in state.creating.compactMap { state.lists[$0]?.last } }
    }

    /// The first sequence number of the entries held once `applied` are not, `nil` when none: the journal's rows
    /// below it are applied.
    func lowWater(after applied: [String: [Entry]]) -> Int64? {
        state.withLock { state in
            state.dropForgottenFront()
            for (seq, list) in state.order[state.head...] {
                guard let held = state.lists[list], held.contains(where: { $0.seq == seq }) else { continue }
                if let through = applied[list]?.last?.seq, seq <= through { continue }
                return seq
            }
            return nil
        }
    }

    /// Forgets the entries of `lists` (applied), keeping any appended since.
    func remove(_ lists: [String: [Entry]]) {
        state.withLock { state in
            for (list, applied) in lists {
                if let last = applied.last { state.forget(list, through: last.seq) }
            }
        }
    }

    /// Forgets every entry of `names` (their rows replaced or removed by a write made directly).
    func drop(_ names: some Sequence<String>) {
        state.withLock { state in
            for name in names { state.forget(name, through: .max) }
        }
    }
}

extension Journal.State {
    fileprivate mutating func hold(_ entries: [Journal.Entry]) {
        for entry in entries {
            lists[entry.list, default: []].append(entry)
            order.append((entry.seq, entry.list))
            if entry.isNew { creating.insert(entry.list) }
        }
        count += entries.count
        bytes += entries.reduce(0) { $0 + $1.bytes }
    }

    fileprivate mutating func forget(_ list: String, through seq: Int64) {
        guard let held = lists[list] else { return }
        let kept = held.filter { $0.seq > seq }
        count -= held.count - kept.count
        bytes -= held.reduce(0) { $0 + $1.bytes } - kept.reduce(0) { $0 + $1.bytes }
        lists[list] = kept.isEmpty ? nil : kept
        if !kept.contains(where: \.isNew) { creating.remove(list) }
    }

    /// Moves `head` past the entries no longer held (applied or dropped), and compacts `order` once most of it is
    /// behind.
    fileprivate mutating func dropForgottenFront() {
        while head < order.count {
            let (seq, list) = order[head]
            // The front entry is the oldest of all: held, it is its list's first.
            guard lists[list]?.first?.seq != seq else { break }
            head += 1
        }
        if head > 4_096, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
