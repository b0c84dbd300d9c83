extension PgOutput.Message {
    /// The message as pgoutput writes it: what ``init(decoding:)`` reads back to an equal message. For tests, and
    /// for the fuzz target's round trip (what decodes, encoded, is the same bytes).
    ///
    /// - Complexity: O(*n*) in the length of the message.
    public var encoded: [UInt8] {
        var writer = ByteWriter()
        switch self {
        case .begin(let begin):
            writer.byte(UInt8(ascii: "B"))
            writer.uint64(begin.finalLSN.rawValue)
            writer.int64(begin.commitTime.rawValue)
            writer.uint32(begin.xid)
        case .commit(let commit):
            writer.byte(UInt8(ascii: "C"))
            writer.byte(commit.flags)
            writer.uint64(commit.commitLSN.rawValue)
            writer.uint64(commit.endLSN.rawValue)
            writer.int64(commit.commitTime.rawValue)
        case .origin(let origin):
            writer.byte(UInt8(ascii: "O"))
            writer.uint64(origin.commitLSN.rawValue)
            writer.string(origin.name)
        case .relation(let relation):
            Self.write(relation, to: &writer)
        case .type(let type):
            writer.byte(UInt8(ascii: "Y"))
            writer.uint32(type.id)
            writer.string(type.namespace)
            writer.string(type.name)
        case .insert(let insert):
            writer.byte(UInt8(ascii: "I"))
            writer.uint32(insert.relationID)
            writer.byte(UInt8(ascii: "N"))
            Self.write(insert.new, to: &writer)
        case .update(let update):
            writer.byte(UInt8(ascii: "U"))
            writer.uint32(update.relationID)
            if let old = update.old { Self.write(old, to: &writer) }
            writer.byte(UInt8(ascii: "N"))
            Self.write(update.new, to: &writer)
        case .delete(let delete):
            writer.byte(UInt8(ascii: "D"))
            writer.uint32(delete.relationID)
            Self.write(delete.old, to: &writer)
        case .truncate(let truncate):
            writer.byte(UInt8(ascii: "T"))
            writer.int32(Int32(truncatingIfNeeded: truncate.relationIDs.count))
            writer.byte(truncate.options.rawValue)
            truncate.relationIDs.forEach { writer.uint32($0) }
        case .message(let message):
            writer.byte(UInt8(ascii: "M"))
            writer.byte(message.flags)
            writer.uint64(message.lsn.rawValue)
            writer.string(message.prefix)
            writer.int32(Int32(truncatingIfNeeded: message.content.count))
            writer.bytes(message.content)
        }
        return writer.bytes
    }

    private static func write(_ relation: PgOutput.Relation, to writer: inout ByteWriter) {
        writer.byte(UInt8(ascii: "R"))
        writer.uint32(relation.id)
        writer.string(relation.namespace)
        writer.string(relation.name)
        writer.byte(relation.replicaIdentity.rawValue)
        writer.int16(Int16(truncatingIfNeeded: relation.columns.count))
        for column in relation.columns {
            writer.byte(column.flags)
            writer.string(column.name)
            writer.uint32(column.typeOID)
            writer.int32(column.typeModifier)
        }
    }

    private static func write(_ old: PgOutput.OldTuple, to writer: inout ByteWriter) {
        switch old {
        case .key(let tuple):
            writer.byte(UInt8(ascii: "K"))
            write(tuple, to: &writer)
        case .full(let tuple):
            writer.byte(UInt8(ascii: "O"))
            write(tuple, to: &writer)
        }
    }

    private static func write(_ tuple: PgOutput.Tuple, to writer: inout ByteWriter) {
        writer.int16(Int16(truncatingIfNeeded: tuple.count))
        for value in tuple {
            switch value {
            case .null: writer.byte(UInt8(ascii: "n"))
            case .unchangedToast: writer.byte(UInt8(ascii: "u"))
            case .text(let bytes):
                writer.byte(UInt8(ascii: "t"))
                writer.int32(Int32(truncatingIfNeeded: bytes.count))
                writer.bytes(bytes)
            case .binary(let bytes):
                writer.byte(UInt8(ascii: "b"))
                writer.int32(Int32(truncatingIfNeeded: bytes.count))
                writer.bytes(bytes)
            }
        }
    }
}
