internal import CMicroHTTPD
internal import CQuireFraming
import Glibc

/// A request's header fields, or its query items, as received: their bytes in one buffer (shared by the two
/// lists of a request), decoded into strings only when a handler looks one up.
///
/// Hand-written for the read path (no library does this for libmicrohttpd): as two strings per field and item in
/// arrays of their own, a request would allocate and destroy two arrays and all their strings, although a read
/// looks up one or two of them. A request copies its fields' bytes once instead, in C (`quire_fields_copy`), into
/// one allocation.
///
/// The buffer holds records: the name's size and the value's as two native `UInt32`, then the name's bytes and the
/// value's. Header names are compared ASCII case-insensitively, query names exactly; invalid UTF-8 in a value is
/// repaired when it is decoded, as `String(decoding:as:)` does.
///
/// `@unchecked Sendable` for its ``FieldBytes`` (a `ManagedBuffer`, which the standard library marks non-`Sendable`):
/// its bytes are written only while no `RequestFields` holds it (inside `FieldBytes.make`, before the buffer is
/// returned, or by `of` into a thread's kept buffer that `isKnownUniquelyReferenced` found held by that thread's
/// ``ThreadRequestCache`` alone, on that thread), and only ever read while one does; the other stored properties are
/// values.
public struct RequestFields: @unchecked Sendable, Sequence {
    /// `nil` for a request with no fields and no query.
    private let storage: FieldBytes?
    private let range: Range<Int>
    private let ignoresCase: Bool

    /// Header fields (names compared ignoring ASCII case).
    public init(headers fields: some Sequence<NamedValue>) {
        self.init(fields, ignoresCase: true)
    }

    /// Query items (names compared exactly).
    public init(query items: some Sequence<NamedValue>) {
        self.init(items, ignoresCase: false)
    }

    private init(_ fields: some Sequence<NamedValue>, ignoresCase: Bool) {
        var bytes: [UInt8] = []
        for field in fields {
            withUnsafeBytes(of: UInt32(field.name.utf8.count)) { bytes += $0 }
            withUnsafeBytes(of: UInt32(field.value.utf8.count)) { bytes += $0 }
            bytes += field.name.utf8
            bytes += field.value.utf8
        }
        let storage =
            bytes.isEmpty
            ? nil
            : FieldBytes.make(count: bytes.count) { base in
                bytes.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: $0.count) }
            }
        self.init(storage: storage, range: 0..<bytes.count, ignoresCase: ignoresCase)
    }

    private init(storage: FieldBytes?, range: Range<Int>, ignoresCase: Bool) {
        self.storage = storage
        self.range = range
        self.ignoresCase = ignoresCase
    }

    /// The header fields and the query items of the request on `connection`, in one buffer (none when the request
    /// has neither). `sizes`: the bytes each kind's records take, as the framing scan counted them
    /// (`quire_framing_fields`).
    ///
    /// `kept` is the thread's buffer (``ThreadRequestCache``), kept from the previous request it served: written over
    /// when nothing else holds it any longer (the previous request's fields are gone) and it is large enough, else
    /// replaced by a new one, which is kept in turn when it is small (``FieldBytes/keptCapacity``). Requests then
    /// cost no allocation for their fields: no `malloc`, and no `free` with the release that runs the buffer's
    /// deinitializer.
    static func of(_ connection: OpaquePointer, sizes: (headers: Int, query: Int), reusing kept: inout FieldBytes?)
        -> (headers: RequestFields, query: RequestFields)
    {
        let (headerBytes, queryBytes) = sizes
        guard headerBytes + queryBytes > 0 else {
            return (RequestFields(storage: nil, range: 0..<0, ignoresCase: true), RequestFields(query: []))
        }
        let count = headerBytes + queryBytes
        let storage: FieldBytes
        // Unique: only the thread's cache holds it, so no request's fields read these bytes any more.
        if isKnownUniquelyReferenced(&kept), let buffer = kept, buffer.capacityBytes >= count {
            storage = buffer
        } else {
            storage = FieldBytes.make(count: count)
            kept = count <= FieldBytes.keptCapacity ? storage : nil
        }
        var (headerEnd, queryEnd) = (0, 0)
        storage.withUnsafeMutablePointerToElements { base in
            quire_fields_copy(connection, base, headerBytes, queryBytes, &headerEnd, &queryEnd)
        }
        // The scan's sizes and the copy's records are counted by the same rule (`quire_fields_record_size`): a
        // field that did not fit would be lost from the request without a word.
        assert(headerEnd == headerBytes && queryEnd == queryBytes, "the fields' sizes changed after the scan")
        return (
            RequestFields(storage: storage, range: 0..<headerEnd, ignoresCase: true),
            RequestFields(storage: storage, range: headerBytes..<headerBytes + queryEnd, ignoresCase: false)
        )
    }

    /// The value of the first field named `name`, or `nil`.
    ///
    /// Disfavored, as ``withValue(of:_:)-(String,_)`` is: a literal name takes the ``subscript(_:)-(StaticString)``.
    ///
    /// - Complexity: O(*n*) in the fields' bytes; decodes only the value found.
    @_disfavoredOverload
    public subscript(name: String) -> String? {
        withValue(of: name) { String(decoding: $0, as: UTF8.self) }
    }

    /// The value of the first field named `name`, a name written in the program, or `nil`.
    ///
    /// - Complexity: O(*n*) in the fields' bytes; decodes only the value found.
    public subscript(name: StaticString) -> String? {
        withValue(of: name) { String(decoding: $0, as: UTF8.self) }
    }

    /// ``withValue(of:_:)-(String,_)`` for a name written in the program, which a literal argument picks (the
    /// `String` form is disfavored): the name's bytes are read where the literal lies. Through a `String`, a short
    /// name's bytes would be copied to the stack for every field of its size compared, and a request looks up a few
    /// names that are not there (`after`, `before`, `Authorization`).
    ///
    /// - Complexity: O(*n*) in the fields' bytes, besides `read`.
    public func withValue<Result>(of name: StaticString, _ read: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        name.withUTF8Buffer { wanted in
            // Optional chaining, as in the `String` form: the buffer is borrowed, not retained.
            let found = storage?.withUnsafeMutablePointerToElements { base -> Result? in
                var records = Records(base, range)
                while let (candidate, value) = records.next() {
                    if candidate.count == wanted.count && matches(candidate, wanted) { return read(value) }
                }
                return nil
            }
            return found ?? nil
        }
    }

    /// What `read` makes of the bytes of the first field named `name` (valid only inside `read`), or `nil`
    /// without one: for a value read without decoding it into a string (an integer, say).
    ///
    /// Disfavored: a literal name takes ``withValue(of:_:)-(StaticString,_)``, which compares bytes in place.
    ///
    /// - Complexity: O(*n*) in the fields' bytes, besides `read`.
    @_disfavoredOverload
    public func withValue<Result>(of name: String, _ read: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        // Through optional chaining, not `guard let`: the buffer is borrowed from `self`, not retained and released
        // around every lookup. Sizes are compared first, and the name's bytes reached only for a candidate of its
        // size: most lookups find no such field (`after`, `before`, `Authorization`), and reaching a literal's bytes
        // (`withContiguousStorageIfAvailable`) for each candidate would cost more than comparing its size.
        let size = name.utf8.count
        let found = storage?.withUnsafeMutablePointerToElements { base -> Result? in
            var records = Records(base, range)
            while let (candidate, value) = records.next() {
                if candidate.count == size && matches(candidate, name) { return read(value) }
            }
            return nil
        }
        return found ?? nil
    }

    /// Every value of the fields named `name`, in order.
    public func values(for name: String) -> [String] {
        filter { namesMatch($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        self[name] != nil
    }

    /// These fields without those named `name`.
    public func removing(_ name: String) -> RequestFields {
        RequestFields(filter { !namesMatch($0.name, name) }, ignoresCase: ignoresCase)
    }

    public var count: Int {
        guard let storage else { return 0 }
        return storage.withUnsafeMutablePointerToElements { base in
            var records = Records(base, range)
            var count = 0
            while records.next() != nil { count += 1 }
            return count
        }
    }

    public var isEmpty: Bool { range.isEmpty }

    /// The fields, decoded, in order.
    public func makeIterator() -> IndexingIterator<[NamedValue]> {
        guard let storage else { return [].makeIterator() }
        return storage.withUnsafeMutablePointerToElements { base in
            var records = Records(base, range)
            var fields: [NamedValue] = []
            while let (name, value) = records.next() {
                fields.append(
                    NamedValue(
                        name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
            }
            return fields
        }.makeIterator()
    }

    /// Whether a field's name is `name`.
    private func matches(_ candidate: UnsafeBufferPointer<UInt8>, _ name: String) -> Bool {
        // A literal or native string's bytes, in place (a bridged string's copied: never on a request's path).
        name.utf8.withContiguousStorageIfAvailable { matches(candidate, $0) }
            ?? matches(candidate, String(decoding: Array(name.utf8), as: UTF8.self))
    }

    private func matches(_ candidate: UnsafeBufferPointer<UInt8>, _ wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        guard candidate.count == wanted.count else { return false }
        guard ignoresCase else {
            return candidate.isEmpty || memcmp(candidate.baseAddress!, wanted.baseAddress!, candidate.count) == 0
        }
        return HTTPHeaders.bytesMatch(candidate, wanted)
    }

    /// `matches` for decoded names: one rule for lookups and for the rarer walks over decoded fields.
    private func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        var (lhs, rhs) = (lhs, rhs)
        return lhs.withUTF8 { left in rhs.withUTF8 { right in matches(left, right) } }
    }

    /// The records in `range` of a buffer, in order: each one's name and value.
    private struct Records {
        let base: UnsafeMutablePointer<UInt8>
        var offset: Int
        let end: Int

        init(_ base: UnsafeMutablePointer<UInt8>, _ range: Range<Int>) {
            (self.base, offset, end) = (base, range.lowerBound, range.upperBound)
        }

        mutating func next() -> (name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)? {
            let sizes = 2 * MemoryLayout<UInt32>.size
            guard offset + sizes <= end else { return nil }
            let raw = UnsafeRawPointer(base + offset)
            let nameSize = Int(raw.loadUnaligned(as: UInt32.self))
            let valueSize = Int(raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            let name = UnsafeBufferPointer(start: base + offset + sizes, count: nameSize)
            let value = UnsafeBufferPointer(start: base + offset + sizes + nameSize, count: valueSize)
            offset += sizes + nameSize + valueSize
            return (name, value)
        }
    }
}

/// The bytes of a request's fields (see ``RequestFields``), whose ranges the fields keep: one allocation of
/// this module's own class, whose header is its capacity. An array of bytes made with `unsafeUninitializedCapacity`
/// would look up the runtime's prespecialized metadata of `[UInt8]`'s storage on every request.
final class FieldBytes: ManagedBuffer<Int, UInt8> {
    /// The largest buffer a thread keeps for its next request's fields: a few times what a client's usual fields take
    /// (a browser's ~500 bytes, a token's ~1 KB more). One per libmicrohttpd thread stays allocated; a larger
    /// request's buffer is freed with the request.
    static let keptCapacity = 4096

    /// The bytes it holds: its header, read through a pointer (reading `header` checks exclusive access at run
    /// time, a call into the runtime).
    var capacityBytes: Int { withUnsafeMutablePointerToHeader { $0.pointee } }

    /// A buffer of at least `count` bytes, uninitialized (bytes past what is written are never read).
    static func make(count: Int) -> FieldBytes {
        // The header is `count`, not the allocation's usable size: reading that is a call into the allocator.
        unsafeDowncast(create(minimumCapacity: count) { _ in count }, to: FieldBytes.self)
    }

    /// A buffer of `count` bytes, filled by `fill`.
    static func make(count: Int, fill: (UnsafeMutablePointer<UInt8>) -> Void) -> FieldBytes {
        let buffer = make(count: count)
        buffer.withUnsafeMutablePointerToElements { fill($0) }
        return buffer
    }
}
