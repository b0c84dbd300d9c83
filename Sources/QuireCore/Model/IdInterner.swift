import Synchronization

/// Maps string ids to small integers, shared by every version of one list.
///
/// Append-only: an id keeps its number forever, so versions built at different times agree on it.
/// Thread-safe: a `Mutex` guards the table; callers look up or add many ids under one lock.
public final class IdInterner: Sendable {
    private struct Table {
        var numbers: [String: Int32] = [:]
        var strings: [String] = []
    }

    private let table = Mutex(Table())

    /// An empty table.
    public init() {}

    /// Number of ids interned so far (every key is below this).
    public var count: Int { table.withLock { $0.strings.count } }

    /// Estimated heap bytes of the table: each id's dictionary slot (a dictionary fills to 3/4) and array element,
    /// and the buffer of each id too long to be stored inline (over 15 UTF-8 bytes).
    ///
    /// - Complexity: O(*n*) for *n* ids.
    public var estimatedBytes: Int {
        table.withLock { table in
            var bytes = table.numbers.capacity * 4 / 3 * (MemoryLayout<String>.stride + 4 + 1)
            bytes += table.strings.capacity * MemoryLayout<String>.stride
            for id in table.strings where id.utf8.count > 15 { bytes += (32 + id.utf8.count + 8 + 15) & ~15 }
            return bytes
        }
    }

    /// The number of `id`, adding it when new.
    ///
    /// - Complexity: O(1) amortized, plus hashing `id`.
    public func intern(_ id: String) -> Int32 {
        table.withLock { Self.intern(id, in: &$0) }
    }

    /// The numbers of `ids`, adding the new ones, under one lock.
    ///
    /// - Complexity: O(*n*) amortized.
    public func intern(_ ids: [String]) -> [Int32] {
        table.withLock { table in ids.map { Self.intern($0, in: &table) } }
    }

    /// The number of `id` if it was ever interned.
    ///
    /// - Complexity: O(1), plus hashing `id`.
    public func lookup(_ id: String) -> Int32? {
        table.withLock { $0.numbers[id] }
    }

    private static func intern(_ id: String, in table: inout Table) -> Int32 {
        if let number = table.numbers[id] { return number }
        let number = Int32(table.strings.count)
        table.numbers[id] = number
        table.strings.append(id)
        return number
    }
}
