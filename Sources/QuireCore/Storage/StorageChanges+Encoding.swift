/// A compact binary form of ``StorageChanges``, for a store that journals a write's changes now and writes its rows
/// later (SQLite's journal of writes): `StorageChanges(encoded: changes.encoded())` equals `changes`.
///
/// Lengths and counts are unsigned LEB128; a string is its UTF-8 bytes after their length; an optional blob is `0`
/// for `nil`, else its length plus one, then its bytes. The fields follow in the order of the type's declaration.
extension StorageChanges {
    /// The changes' bytes (see the extension).
    public func encoded() -> [UInt8] {
        var writer = Writer()
        writer.strings(removedSections)
        writer.count(placedSections.count)
        for run in placedSections {
            writer.optionalString(run.after)
            writer.optionalString(run.before)
            writer.count(run.sections.count)
            for section in run.sections { writer.section(section) }
        }
        writer.count(updatedSections.count)
        for section in updatedSections { writer.section(section) }
        writer.strings(removedItems)
        writer.strings(movedItems)
        writer.count(placedItems.count)
        for run in placedItems {
            switch run.container {
            case .section(let id):
                writer.bytes.append(0)
                writer.string(id)
            case .item(let id):
                writer.bytes.append(1)
                writer.string(id)
            }
            writer.optionalString(run.after)
            writer.optionalString(run.before)
            writer.count(run.items.count)
            for item in run.items { writer.item(item) }
        }
        writer.count(updatedItems.count)
        for item in updatedItems { writer.item(item) }
        return writer.bytes
    }

    /// The changes `bytes` encode (``encoded()``).
    ///
    /// - Throws: ``StoredListError`` when `bytes` are not such an encoding (cut short, or bytes left over).
    public init(encoded bytes: UnsafeBufferPointer<UInt8>) throws(StoredListError) {
        var reader = Reader(bytes: bytes)
        self.init()
        removedSections = try reader.strings()
        for _ in 0..<(try reader.count()) {
            let after = try reader.optionalString()
            let before = try reader.optionalString()
            var sections: [Section] = []
            for _ in 0..<(try reader.count()) { sections.append(try reader.section()) }
            placedSections.append(SectionRun(after: after, before: before, sections: sections))
        }
        for _ in 0..<(try reader.count()) { updatedSections.append(try reader.section()) }
        removedItems = try reader.strings()
        movedItems = try reader.strings()
        for _ in 0..<(try reader.count()) {
            let kind = try reader.byte()
            let id = try reader.string()
            let container: Container
            switch kind {
            case 0: container = .section(id)
            case 1: container = .item(id)
            default: throw StoredListError("a journaled change names a container of kind \(kind)")
            }
            let after = try reader.optionalString()
            let before = try reader.optionalString()
            var items: [Item] = []
            for _ in 0..<(try reader.count()) { items.append(try reader.item()) }
            placedItems.append(ItemRun(container: container, after: after, before: before, items: items))
        }
        for _ in 0..<(try reader.count()) { updatedItems.append(try reader.item()) }
        guard reader.offset == bytes.count else {
            throw StoredListError("a journaled change has \(bytes.count - reader.offset) bytes left over")
        }
    }
}

private struct Writer {
    var bytes: [UInt8] = []

    mutating func count(_ value: Int) {
        var value = UInt(value)
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func blob(_ blob: [UInt8]) {
        count(blob.count)
        bytes.append(contentsOf: blob)
    }

    mutating func string(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            count(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func strings(_ strings: [String]) {
        count(strings.count)
        for string in strings { self.string(string) }
    }

    mutating func optionalString(_ string: String?) {
        if let string {
            bytes.append(1)
            self.string(string)
        } else {
            bytes.append(0)
        }
    }

    mutating func optionalBlob(_ blob: [UInt8]?) {
        if let blob {
            count(blob.count + 1)
            bytes.append(contentsOf: blob)
        } else {
            count(0)
        }
    }

    mutating func section(_ section: StorageChanges.Section) {
        string(section.id)
        optionalBlob(section.header)
        optionalBlob(section.footer)
    }

    mutating func item(_ item: StorageChanges.Item) {
        string(item.id)
        blob(item.body)
    }
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0

    mutating func byte() throws(StoredListError) -> UInt8 {
        guard offset < bytes.count else { throw StoredListError("a journaled change is cut short") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func count() throws(StoredListError) -> Int {
        var value: UInt = 0
        var shift: UInt = 0
        while true {
            let byte = try byte()
            guard shift < 63 else { throw StoredListError("a journaled change holds a length out of range") }
            value |= UInt(byte & 0x7f) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        // Every element and every byte counted takes a byte at least: a count beyond those left is damage.
        guard value <= UInt(bytes.count - offset) else {
            throw StoredListError("a journaled change holds a length out of range")
        }
        return Int(value)
    }

    mutating func blob(length: Int) throws(StoredListError) -> [UInt8] {
        guard length <= bytes.count - offset else { throw StoredListError("a journaled change is cut short") }
        defer { offset += length }
        return Array(UnsafeBufferPointer(rebasing: bytes[offset..<offset + length]))
    }

    mutating func string() throws(StoredListError) -> String {
        let length = try count()
        guard length <= bytes.count - offset else { throw StoredListError("a journaled change is cut short") }
        defer { offset += length }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[offset..<offset + length]), as: UTF8.self)
    }

    mutating func strings() throws(StoredListError) -> [String] {
        var strings: [String] = []
        for _ in 0..<(try count()) { strings.append(try string()) }
        return strings
    }

    mutating func optionalString() throws(StoredListError) -> String? {
        try byte() == 0 ? nil : try string()
    }

    mutating func optionalBlob() throws(StoredListError) -> [UInt8]? {
        let length = try count()
        return length == 0 ? nil : try blob(length: length - 1)
    }

    mutating func section() throws(StoredListError) -> StorageChanges.Section {
        StorageChanges.Section(id: try string(), header: try optionalBlob(), footer: try optionalBlob())
    }

    mutating func item() throws(StoredListError) -> StorageChanges.Item {
        let id = try string()
        return StorageChanges.Item(id: id, body: try blob(length: try count()))
    }
}
