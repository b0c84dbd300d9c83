/// One column's value in an order key, compared as PostgreSQL's `ORDER BY … COLLATE "C"` compares values of its
/// type: numbers by value (any precision, integers and floats alike), booleans `false` before `true`, text by its
/// UTF-8 bytes (`character(n)` without its trailing spaces), dates, times and timestamps by time; NULL after every
/// value (ascending: a descending key reverses the whole comparison, which puts it first, as PostgreSQL does).
///
/// A value of a type without such an order (``PostgresType/isOrderable``), or a text that does not read as its type,
/// orders by its text's bytes, after the values of the other kinds: the check against the catalog refuses such sort
/// columns, so this is only what keeps the order total.
public struct SortValue: Sendable, Hashable, Comparable {
    enum Storage: Sendable, Hashable {
        case boolean(Bool)
        case number(DecimalKey)
        case time(TimeKey)
        case bytes([UInt8])
        case null

        var rank: Int {
            switch self {
            case .boolean: 0
            case .number: 1
            case .time: 2
            case .bytes: 3
            case .null: 4
            }
        }
    }

    let storage: Storage

    /// SQL's NULL.
    public static let null = SortValue(storage: .null)

    init(storage: Storage) {
        self.storage = storage
    }

    /// The value `text` prints, of type `type`; `nil` text is NULL.
    ///
    /// - Complexity: O(*n*) in the length of `text`.
    public init(_ text: String?, type: PostgresType) {
        guard let text else {
            self = .null
            return
        }
        let kind = type.kind
        switch kind {
        case .integer, .decimal:
            if let number = DecimalKey(text) {
                self.init(storage: .number(number))
                return
            }
        case .boolean:
            if text == "t" || text == "f" {
                self.init(storage: .boolean(text == "t"))
                return
            }
        case .date, .time, .timetz, .timestamp, .timestamptz:
            if let time = TimeKey(text, kind: kind) {
                self.init(storage: .time(time))
                return
            }
        case .paddedText:
            var bytes = Array(text.utf8)
            while bytes.last == UInt8(ascii: " ") { bytes.removeLast() }
            self.init(storage: .bytes(bytes))
            return
        case .text, .json, .array, .other:
            break
        }
        self.init(storage: .bytes(Array(text.utf8)))
    }

    public static func < (lhs: SortValue, rhs: SortValue) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// -1, 0 or 1, ascending.
    static func compare(_ lhs: SortValue, _ rhs: SortValue) -> Int {
        switch (lhs.storage, rhs.storage) {
        case (.boolean(let a), .boolean(let b)): return a == b ? 0 : (b ? -1 : 1)
        case (.number(let a), .number(let b)): return DecimalKey.compare(a, b)
        case (.time(let a), .time(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.bytes(let a), .bytes(let b)): return a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
        case (.null, .null): return 0
        case (let a, let b): return a.rank < b.rank ? -1 : 1
        }
    }

    /// Whether this is NULL.
    public var isNull: Bool { storage == .null }
}
