import QuireSources
import Testing

/// The decoder on messages captured from a real PostgreSQL (CapturedPgOutput.swift, made by
/// scripts/test/capture-pgoutput): every kind of message, with what the server itself reported about each.
@Suite("pgoutput: captured messages")
struct PgOutputCapturedTests {
    @Test("every captured message decodes, and encodes back to the same bytes")
    func roundTrip() throws {
        #expect(CapturedPgOutput.messages.count > 40)
        for captured in CapturedPgOutput.messages {
            let message = try PgOutput.Message(decoding: captured.bytes)
            #expect(message.encoded == captured.bytes, "\(captured.step) \(captured.index)")
        }
    }

    @Test("every kind of version 1 is among the captures")
    func everyKind() throws {
        let kinds = Set(try CapturedPgOutput.messages.map { try PgOutput.Message(decoding: $0.bytes).kind })
        #expect(kinds == ["B", "C", "O", "R", "Y", "I", "U", "D", "T", "M"])
    }

    @Test("Begin and Commit carry the transaction id and the positions the server reported")
    func transactionBounds() throws {
        for step in CapturedPgOutput.steps.map(\.name) {
            let captured = CapturedPgOutput.messages.filter { $0.step == step }
            let decoded = try CapturedPgOutput.decoded(step)
            for (index, message) in decoded.enumerated() {
                if let begin = message.begin {
                    #expect(begin.xid == captured[index].xid, "\(step)")
                    let commit = try #require(decoded[index...].lazy.compactMap(\.commit).first, "\(step)")
                    #expect(begin.finalLSN == commit.commitLSN, "\(step)")
                    #expect(begin.commitTime == commit.commitTime, "\(step)")
                }
                if let commit = message.commit {
                    // The server reports a commit at the end of its record.
                    #expect(commit.endLSN == LSN(captured[index].lsn), "\(step)")
                    #expect(commit.commitLSN < commit.endLSN)
                    #expect(commit.flags == 0)
                }
            }
        }
    }

    @Test("an insert: a Type for the enum, the Relation with its key and typmods, the new row with a NULL")
    func insert() throws {
        let messages = try CapturedPgOutput.decoded("insert")
        #expect(messages.map(\.kind) == ["B", "Y", "R", "I", "C"])
        guard case .type(let mood) = messages[1] else { throw Unexpected(messages[1]) }
        #expect((mood.namespace, mood.name) == ("public", "mood"))
        let relation = try #require(messages[2].relation)
        #expect((relation.namespace, relation.name, relation.replicaIdentity) == ("public", "items", .default))
        #expect(relation.columns.map(\.name) == ["id", "title", "body", "note", "mood", "amount", "tag"])
        #expect(relation.columns.map(\.isKey) == [true, false, false, false, false, false, false])
        #expect(relation.columns.map(\.typeOID) == [23, 25, 25, 25, mood.id, 1700, 1043])
        // numeric(10,2) is ((10 << 16) | 2) + 4, varchar(20) is 20 + 4, the others have none.
        #expect(relation.columns.map(\.typeModifier) == [-1, -1, -1, -1, -1, 655_366, 24])
        let insert = try #require(messages[3].insert)
        #expect(insert.relationID == relation.id)
        let body = String(repeating: "0123456789abcdef", count: 200)
        #expect(insert.new.strings == ["1", "one", body, nil, "calm", "12.50", "tagged"])
    }

    @Test("an update that leaves a TOASTed value alone sends it as unchanged, and no old tuple")
    func unchangedToast() throws {
        let messages = try CapturedPgOutput.decoded("update-unchanged-toast")
        #expect(messages.map(\.kind) == ["B", "Y", "R", "U", "C"])
        let update = try #require(messages[3].update)
        #expect(update.old == nil)
        #expect(update.new.strings == ["1", "uno", "(unchanged)", nil, "calm", "12.50", "tagged"])
        #expect(update.new[2] == .unchangedToast)
    }

    @Test("an update of the key sends the old key (K), the other columns null")
    func updateOfTheKey() throws {
        let update = try #require(try CapturedPgOutput.decoded("update-key")[3].update)
        #expect(update.old == .key([.text("1"), .null, .null, .null, .null, .null, .null]))
        #expect(update.new.strings == ["2", "uno", "(unchanged)", nil, "calm", "12.50", "tagged"])
    }

    @Test("a composite key: both columns flagged, both in the old key of an update that changes one of them")
    func compositeKey() throws {
        let messages = try CapturedPgOutput.decoded("composite-key")
        #expect(messages.map(\.kind) == ["B", "R", "I", "U", "C"])
        let relation = try #require(messages[1].relation)
        #expect(relation.columns.map(\.name) == ["a", "b", "v"])
        #expect(relation.columns.map(\.isKey) == [true, true, false])
        #expect(messages[2].insert?.new.strings == ["1", "x", "first"])
        let update = try #require(messages[3].update)
        #expect(update.old == .key([.text("1"), .text("x"), .null]))
        #expect(update.new.strings == ["1", "y", "first"])
    }

    @Test("a delete sends the key (K)")
    func deleteByKey() throws {
        let messages = try CapturedPgOutput.decoded("delete-key")
        #expect(messages.map(\.kind) == ["B", "Y", "R", "D", "C"])
        let delete = try #require(messages[3].delete)
        #expect(delete.relationID == messages[2].relation?.id)
        #expect(delete.old == .key([.text("2"), .null, .null, .null, .null, .null, .null]))
    }

    @Test("REPLICA IDENTITY FULL: the Relation says so, updates and deletes send the whole old row (O)")
    func identityFull() throws {
        let messages = try CapturedPgOutput.decoded("identity-full")
        #expect(messages.map(\.kind) == ["B", "R", "U", "D", "C"])
        #expect(messages[1].relation?.replicaIdentity == .full)
        let update = try #require(messages[2].update)
        #expect(update.old == .full([.text("1"), .text("y"), .text("first")]))
        #expect(update.new.strings == ["1", "y", "second"])
        #expect(messages[3].delete?.old == .full([.text("1"), .text("y"), .text("second")]))
    }

    @Test("TRUNCATE of two tables with RESTART IDENTITY CASCADE: one Truncate naming both, after their Relations")
    func truncate() throws {
        let messages = try CapturedPgOutput.decoded("truncate")
        #expect(messages.map(\.kind) == ["B", "Y", "R", "I", "C", "B", "Y", "R", "R", "T", "C"])
        let truncate = try #require(messages[9].truncate)
        #expect(truncate.options == [.cascade, .restartIdentity])
        #expect(truncate.relationIDs == [try #require(messages[7].relation).id, try #require(messages[8].relation).id])
    }

    @Test("logical decoding messages: one outside any transaction, one inside, flagged transactional")
    func logicalMessages() throws {
        let messages = try CapturedPgOutput.decoded("messages")
        #expect(messages.map(\.kind) == ["M", "B", "M", "R", "I", "C"])
        let alone = try #require(messages[0].logicalMessage)
        #expect((alone.isTransactional, alone.prefix, alone.content) == (false, "quire", Array("alone".utf8)))
        #expect(alone.lsn == LSN(try #require(CapturedPgOutput.message("messages", 0)).lsn))
        let inside = try #require(messages[2].logicalMessage)
        #expect((inside.isTransactional, inside.content) == (true, Array("in a transaction".utf8)))
        #expect(messages[4].insert?.new.strings == ["1", "beside a message"])
    }

    @Test("a transaction replicated from elsewhere carries its Origin: the name and the origin's commit position")
    func origin() throws {
        let messages = try CapturedPgOutput.decoded("origin")
        #expect(messages.map(\.kind) == ["B", "O", "R", "I", "C"])
        #expect(messages[1] == .origin(PgOutput.Origin(commitLSN: LSN("0/ABCDEF")!, name: "quire_origin")))
    }

    @Test("binary values (b) when the stream asks for them")
    func binary() throws {
        let insert = try #require(try CapturedPgOutput.decoded("binary")[2].insert)
        #expect(insert.new == [.binary([0, 0, 0, 0, 0, 0, 0, 3]), .binary(Array("in binary".utf8))])
        #expect(insert.new[1].string == nil, "a binary value is not text")
    }
}

/// A message of another kind than the test expected.
struct Unexpected: Error, CustomStringConvertible {
    let message: PgOutput.Message
    init(_ message: PgOutput.Message) { self.message = message }
    var description: String { "unexpected \(message)" }
}
