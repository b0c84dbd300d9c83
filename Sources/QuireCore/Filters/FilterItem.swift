/// An item as a filter reads it: its encoded JSON, with where its `id`, `type` and `data` values start.
///
/// Built from the item's canonical bytes (`{"id":…,"type":…,"data":…}`, as a list version keeps them) without
/// parsing them into a ``JSONValue``: a view is built by matching every top-level item of the list, and most terms
/// read one short value, so a term walks the bytes to its value and compares it where it lies (see
/// ``FilterMatcher``). Any JSON object is read correctly (whitespace, members in any order, escapes); when a key
/// repeats, which ``JSONParser`` never lets into a list, the first one counts. Bytes that are not JSON never trap:
/// what is read from them is unspecified.
public struct FilterItem: Sendable {
    /// The item's JSON.
    let bytes: [UInt8]
    /// Where its root members' values start.
    let root: ItemRoot

    /// The item whose JSON is `encoded`: finds its root members once, reading up to the start of `data`'s value
    /// when the members come in canonical order.
    ///
    /// - Complexity: O(*k*) in the length of the members before `data`'s value (the id and the type).
    public init(encoded: [UInt8]) {
        bytes = encoded
        root = encoded.withUnsafeBufferPointer { ItemRoot(JSONScanner(bytes: $0)) }
    }

    /// The scalar at `field`; `nil` when the field is absent or holds an object or an array.
    ///
    /// What a view's index looks up (``ListFilter/indexKeys``): a changed item can enter or leave only the views
    /// that have no keys or have one of its values as a key.
    ///
    /// - Complexity: O(*n*) in the bytes of `data` before the value, plus the value's length.
    public func value(at field: FilterField) -> FilterScalar? {
        bytes.withUnsafeBufferPointer { buffer in
            let scanner = JSONScanner(bytes: buffer)
            let start: Int? =
                switch field {
                case .id: root.id
                case .type: root.type
                case .data(let keys): scanner.start(ofDataKeys: keys.lazy.map(\.utf8), in: root)
                }
            guard let start else { return nil }
            switch scanner.scalar(at: start) {
            case .string(let content): return .string(String(decoding: content, as: UTF8.self))
            case .escapedString(let token):
                return scanner.decoded(token).map { .string(String(decoding: $0, as: UTF8.self)) }
            case .number(let value): return .number(value)
            case .bool(let flag): return .bool(flag)
            case .null: return .null
            case .composite, .invalid: return nil
            }
        }
    }
}

/// Where the values of an item's root members `id`, `type` and `data` start in its JSON (`nil`: no such member).
struct ItemRoot {
    let id: Int?
    let type: Int?
    let data: Int?

    /// The starts in the bytes `scanner` reads: canonical bytes, `{"id":"…","type":"…","data":…`, are recognised
    /// with three comparisons, the id and the type skipped; others are read member by member.
    ///
    /// - Complexity: O(*k*) in the length of the members before `data`'s value, when canonical.
    init(_ scanner: JSONScanner) {
        let idStart = 6
        if scanner.bytes(at: 0, are: "{\"id\":\""), let id = scanner.stringToken(at: idStart),
            scanner.bytes(at: id.contentEnd + 1, are: ",\"type\":\""),
            let type = scanner.stringToken(at: id.contentEnd + 9),
            scanner.bytes(at: type.contentEnd + 1, are: ",\"data\":"), type.contentEnd + 9 < scanner.bytes.count
        {
            (self.id, self.type, data) = (idStart, id.contentEnd + 9, type.contentEnd + 9)
            return
        }
        var starts: (id: Int?, type: Int?, data: Int?)
        scanner.forEachMember(ofObjectAt: scanner.skipWhitespace(from: 0)) { key, valueStart in
            if scanner.string(key, equals: "id") {
                starts.id = starts.id ?? valueStart
            } else if scanner.string(key, equals: "type") {
                starts.type = starts.type ?? valueStart
            } else if scanner.string(key, equals: "data") {
                starts.data = starts.data ?? valueStart
            }
            return starts.id == nil || starts.type == nil || starts.data == nil
        }
        (id, type, data) = starts
    }
}

extension JSONScanner {
    /// Where the value at `keys` inside the item's `data` starts, or `nil` when it is absent.
    ///
    /// - Complexity: O(*n*) in the bytes of `data` before the value.
    @inline(__always)
    func start(ofDataKeys keys: some Sequence<some Collection<UInt8>>, in root: ItemRoot) -> Int? {
        guard var start = root.data else { return nil }
        for key in keys {
            guard let next = memberValue(named: key, inObjectAt: start) else { return nil }
            start = next
        }
        return start
    }

    /// Whether the bytes from `index` on begin with `literal`.
    @inline(__always)
    func bytes(at index: Int, are literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index >= 0, bytes.count - index >= count else { return false }
        let expected = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != expected[offset] { return false }
        return true
    }
}
