extension PgOutput.Message {
    /// Reads one pgoutput message (protocol version 1): an XLogData's payload.
    ///
    /// Every read is checked: a message cut short, of a kind version 1 does not have (the streaming messages of
    /// version 2 and later included), with a marker or count out of place, with a name that is not UTF-8, or with
    /// bytes after its end throws; no input traps.
    ///
    /// - Throws: ``ReplicationDecodingError``, naming the message and the offset.
    /// - Complexity: O(*n*) in the length of the message.
    public init(decoding bytes: [UInt8]) throws(ReplicationDecodingError) {
        var reader = ByteReader(bytes, messageName: "pgoutput")
        let kind = try reader.byte()
        switch kind {
        case UInt8(ascii: "B"):
            reader.messageName = "Begin"
            self = .begin(
                PgOutput.Begin(
                    finalLSN: LSN(try reader.uint64()), commitTime: PostgresTimestamp(rawValue: try reader.int64()),
                    xid: try reader.uint32()))
        case UInt8(ascii: "C"):
            reader.messageName = "Commit"
            self = .commit(
                PgOutput.Commit(
                    flags: try reader.byte(), commitLSN: LSN(try reader.uint64()), endLSN: LSN(try reader.uint64()),
                    commitTime: PostgresTimestamp(rawValue: try reader.int64())))
        case UInt8(ascii: "O"):
            reader.messageName = "Origin"
            self = .origin(PgOutput.Origin(commitLSN: LSN(try reader.uint64()), name: try reader.string("the name")))
        case UInt8(ascii: "R"):
            reader.messageName = "Relation"
            self = .relation(try Self.relation(&reader))
        case UInt8(ascii: "Y"):
            reader.messageName = "Type"
            self = .type(
                PgOutput.DataType(
                    id: try reader.uint32(), namespace: try reader.string("the namespace"),
                    name: try reader.string("the name")))
        case UInt8(ascii: "I"):
            reader.messageName = "Insert"
            let relationID = try reader.uint32()
            try Self.expectMarker(&reader, UInt8(ascii: "N"), "the new tuple's N")
            self = .insert(PgOutput.Insert(relationID: relationID, new: try Self.tuple(&reader)))
        case UInt8(ascii: "U"):
            reader.messageName = "Update"
            self = .update(try Self.update(&reader))
        case UInt8(ascii: "D"):
            reader.messageName = "Delete"
            let relationID = try reader.uint32()
            guard let old = try Self.oldTuple(&reader, marker: try reader.byte()) else {
                throw reader.failure("no K or O before the old tuple")
            }
            self = .delete(PgOutput.Delete(relationID: relationID, old: old))
        case UInt8(ascii: "T"):
            reader.messageName = "Truncate"
            self = .truncate(try Self.truncate(&reader))
        case UInt8(ascii: "M"):
            reader.messageName = "Message"
            let flags = try reader.byte()
            let lsn = LSN(try reader.uint64())
            let prefix = try reader.string("the prefix")
            let length = try reader.int32()
            guard length >= 0 else { throw reader.failure("a content length of \(length)") }
            let content = try reader.bytes(Int(length), "the content")
            self = .message(PgOutput.LogicalMessage(flags: flags, lsn: lsn, prefix: prefix, content: content))
        default:
            throw reader.failure("an unknown message kind \(Self.printable(kind))")
        }
        try reader.expectEnd()
    }

    private static func relation(_ reader: inout ByteReader) throws(ReplicationDecodingError) -> PgOutput.Relation {
        let id = try reader.uint32()
        let namespace = try reader.string("the namespace")
        let name = try reader.string("the name")
        let identity = try reader.byte()
        guard let replicaIdentity = PgOutput.ReplicaIdentity(rawValue: identity) else {
            throw reader.failure("an unknown replica identity \(printable(identity))")
        }
        let count = try reader.int16()
        guard count >= 0 else { throw reader.failure("a column count of \(count)") }
        var columns: [PgOutput.Column] = []
        columns.reserveCapacity(min(Int(count), reader.remaining / 10))
        for _ in 0..<count {
            columns.append(
                PgOutput.Column(
                    flags: try reader.byte(), name: try reader.string("a column's name"), typeOID: try reader.uint32(),
                    typeModifier: try reader.int32()))
        }
        return PgOutput.Relation(
            id: id, namespace: namespace, name: name, replicaIdentity: replicaIdentity, columns: columns)
    }

    private static func update(_ reader: inout ByteReader) throws(ReplicationDecodingError) -> PgOutput.Update {
        let relationID = try reader.uint32()
        var marker = try reader.byte()
        let old = try oldTuple(&reader, marker: marker)
        if old != nil { marker = try reader.byte() }
        guard marker == UInt8(ascii: "N") else {
            throw reader.failure("\(printable(marker)) where the new tuple's N belongs")
        }
        return PgOutput.Update(relationID: relationID, old: old, new: try tuple(&reader))
    }

    private static func truncate(_ reader: inout ByteReader) throws(ReplicationDecodingError) -> PgOutput.Truncate {
        let count = try reader.int32()
        let options = PgOutput.TruncateOptions(rawValue: try reader.byte())
        guard count >= 0, Int(count) * 4 == reader.remaining else {
            throw reader.failure("\(count) relations in \(reader.remaining) bytes")
        }
        var relationIDs: [UInt32] = []
        relationIDs.reserveCapacity(Int(count))
        for _ in 0..<count { relationIDs.append(try reader.uint32()) }
        return PgOutput.Truncate(options: options, relationIDs: relationIDs)
    }

    /// The old tuple that `marker` (`K` or `O`, just read) introduces, or nil for any other marker.
    private static func oldTuple(
        _ reader: inout ByteReader, marker: UInt8
    ) throws(ReplicationDecodingError) -> PgOutput.OldTuple? {
        switch marker {
        case UInt8(ascii: "K"): .key(try tuple(&reader))
        case UInt8(ascii: "O"): .full(try tuple(&reader))
        default: nil
        }
    }

    /// TupleData: a column count, then per column its kind (`n`, `u`, `t`, `b`) and for `t` and `b` a length and
    /// the bytes.
    private static func tuple(_ reader: inout ByteReader) throws(ReplicationDecodingError) -> PgOutput.Tuple {
        let count = try reader.int16()
        guard count >= 0 else { throw reader.failure("a column count of \(count)") }
        var values: [PgOutput.Value] = []
        // Each column takes a byte at least: a count beyond the bytes left cannot reserve memory for nothing.
        values.reserveCapacity(min(Int(count), reader.remaining))
        for _ in 0..<count {
            let kind = try reader.byte()
            switch kind {
            case UInt8(ascii: "n"): values.append(.null)
            case UInt8(ascii: "u"): values.append(.unchangedToast)
            case UInt8(ascii: "t"), UInt8(ascii: "b"):
                let length = try reader.int32()
                guard length >= 0 else { throw reader.failure("a value length of \(length)") }
                let bytes = try reader.bytes(Int(length), "a value")
                values.append(kind == UInt8(ascii: "t") ? .text(bytes) : .binary(bytes))
            default:
                throw reader.failure("an unknown value kind \(printable(kind))")
            }
        }
        return PgOutput.Tuple(values)
    }

    private static func expectMarker(
        _ reader: inout ByteReader, _ marker: UInt8, _ what: String
    ) throws(ReplicationDecodingError) {
        let found = try reader.byte()
        guard found == marker else { throw reader.failure("\(printable(found)) where \(what) belongs") }
    }

    /// A byte as a character in quotes when it is a printable ASCII one, else as its number.
    private static func printable(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x\(String(byte, radix: 16))"
    }
}
