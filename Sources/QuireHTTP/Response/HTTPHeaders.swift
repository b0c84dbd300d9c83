/// A name and its value: a header field, or an item of a request's query.
///
/// A struct, not a `(name:, value:)` tuple: an array of tuples is destroyed through the runtime's generic tuple
/// witnesses (`tuple_destroy` under `swift_arrayDestroy`), element by element and field by field, for every field
/// or query item of every request; a struct's own destroy is compiled code.
public struct NamedValue: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// The header fields of a response (or of a request made in code: a request from the network keeps its fields as
/// ``RequestFields``), in order, with case-insensitive lookup.
///
/// Stored as an array: requests and responses carry a handful of fields, where a linear scan beats
/// hashing.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Field = NamedValue

    private var fields: [Field]

    public init() {
        fields = []
    }

    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { NamedValue(name: $0.0, value: $0.1) }
    }

    /// The fields as they are (no copy).
    public init(fields: [Field]) {
        self.fields = fields
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The value of the first field named `name` (compared case-insensitively), or `nil`.
    ///
    /// - Complexity: O(*n*) in the number of fields.
    public subscript(name: String) -> String? {
        fields.first { Self.namesMatch($0.name, name) }?.value
    }

    /// Every value of the fields named `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    /// Appends a field (a header may appear more than once).
    public mutating func add(_ name: String, _ value: String) {
        fields.append(NamedValue(name: name, value: value))
    }

    /// Replaces every field named `name` by one with `value`.
    public mutating func replace(_ name: String, with value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { Self.namesMatch($0.name, name) }
    }

    public func contains(_ name: String) -> Bool {
        fields.contains { Self.namesMatch($0.name, name) }
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields == rhs.fields
    }

    /// ASCII case-insensitive comparison, without allocating.
    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        // Most names differ in length: that answer costs nothing (a native string knows its UTF-8 count).
        lhs.utf8.count == rhs.utf8.count && startsIgnoringCase(lhs, with: rhs)
    }

    /// Whether `text` starts with `prefix`, ASCII letters compared in either case (header names), without
    /// allocating.
    ///
    /// Over the strings' contiguous UTF-8 (every native string has it, a short one on the stack): the
    /// UTF-8 views' iterators would cost more than the rest of the comparison, on every field a request looks
    /// up.
    static func startsIgnoringCase(_ text: String, with prefix: String) -> Bool {
        let count = prefix.utf8.count
        guard text.utf8.count >= count else { return false }
        let contiguous = text.utf8.withContiguousStorageIfAvailable { left in
            prefix.utf8.withContiguousStorageIfAvailable { right in
                bytesMatch(UnsafeBufferPointer(rebasing: left[..<count]), right)
            }
        }
        if let answer = contiguous ?? nil { return answer }
        // A bridged string: not on a request's path.
        return bytesMatch(Array(text.utf8.prefix(count)), Array(prefix.utf8))
    }

    /// Whether two byte sequences of equal length are equal but for the case of ASCII letters.
    static func bytesMatch<Bytes: RandomAccessCollection<UInt8>>(_ left: Bytes, _ right: Bytes) -> Bool
    where Bytes.Index == Int {
        for index in left.indices {
            let a = left[index]
            let b = right[index]
            if a == b { continue }
            let lower = a | 0x20
            guard lower == b | 0x20, lower >= UInt8(ascii: "a"), lower <= UInt8(ascii: "z") else { return false }
        }
        return true
    }
}
