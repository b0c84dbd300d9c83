import QuireSources
import Testing

/// The decoder on bytes that are not a message: cut short, corrupted, extended, random. Each throws a
/// ``ReplicationDecodingError``; none traps.
@Suite("pgoutput: malformed messages")
struct PgOutputMalformedTests {
    @Test("every captured message cut short anywhere throws, naming the message")
    func truncated() throws {
        for captured in CapturedPgOutput.messages {
            let bytes = captured.bytes
            for length in 0..<bytes.count {
                let error = #expect(throws: ReplicationDecodingError.self) {
                    try PgOutput.Message(decoding: Array(bytes[..<length]))
                }
                if length > 0, let error { #expect(error.messageName != "pgoutput", "\(captured.step) \(length)") }
            }
        }
    }

    @Test("every captured message with a byte more throws: a message has no room after its end")
    func extended() throws {
        for captured in CapturedPgOutput.messages {
            let error = #expect(throws: ReplicationDecodingError.self) {
                try PgOutput.Message(decoding: captured.bytes + [0])
            }
            // A Truncate's relations fill the rest of it: a byte more breaks their count instead.
            let truncate = captured.bytes.first == UInt8(ascii: "T")
            let reason = truncate ? "2 relations in 9 bytes" : "1 bytes after the message's end"
            #expect(error?.reason == reason, "\(captured.step) \(captured.index)")
            #expect(error?.offset == (truncate ? 6 : captured.bytes.count))
        }
    }

    @Test(
        "corrupted fields throw with the reason",
        arguments: [
            ([], "a byte where none is left"),
            (Array("S".utf8) + [0, 0, 0, 1], "an unknown message kind 'S'"),
            ([0x00], "an unknown message kind 0x0"),
            // Insert: relation 1, then X where N belongs.
            (Array("I".utf8) + [0, 0, 0, 1] + Array("X".utf8), "'X' where the new tuple's N belongs"),
            // Update: relation 1, an old key of no columns, then X where N belongs.
            (
                Array("U".utf8) + [0, 0, 0, 1] + Array("K".utf8) + [0, 0] + Array("X".utf8),
                "'X' where the new tuple's N belongs"
            ),
            // Delete: relation 1, then N (a delete has only an old tuple).
            (Array("D".utf8) + [0, 0, 0, 1] + Array("N".utf8) + [0, 0], "no K or O before the old tuple"),
            // Relation 1 "s"."t", replica identity z.
            (
                Array("R".utf8) + [0, 0, 0, 1, 0x73, 0, 0x74, 0] + Array("z".utf8) + [0, 0],
                "an unknown replica identity 'z'"
            ),
            (
                Array("R".utf8) + [0, 0, 0, 1, 0x73, 0, 0x74, 0] + Array("d".utf8) + [0xFF, 0xFF],
                "a column count of -1"
            ),
            // Insert of a tuple with -2 columns, then of one whose value is of kind x.
            (Array("I".utf8) + [0, 0, 0, 1] + Array("N".utf8) + [0xFF, 0xFE], "a column count of -2"),
            (
                Array("I".utf8) + [0, 0, 0, 1] + Array("N".utf8) + [0, 1] + Array("x".utf8),
                "an unknown value kind 'x'"
            ),
            // A text value of length -1, then one longer than what is left.
            (
                Array("I".utf8) + [0, 0, 0, 1] + Array("N".utf8) + [0, 1] + Array("t".utf8) + [0xFF, 0xFF, 0xFF, 0xFF],
                "a value length of -1"
            ),
            (
                Array("I".utf8) + [0, 0, 0, 1] + Array("N".utf8) + [0, 1] + Array("t".utf8) + [0x7F, 0xFF, 0xFF, 0xFF]
                    + Array("abc".utf8), "a value (2147483647 bytes) where 3 are left"
            ),
            // A tuple claiming 32767 columns with one byte of them.
            (
                Array("I".utf8) + [0, 0, 0, 1] + Array("N".utf8) + [0x7F, 0xFF] + Array("n".utf8),
                "a byte where none is left"
            ),
            // Type 1 with a namespace that never ends, then one that is not UTF-8.
            (Array("Y".utf8) + [0, 0, 0, 1] + Array("public".utf8), "the namespace without its ending zero"),
            (Array("Y".utf8) + [0, 0, 0, 1, 0xC3, 0x28, 0, 0x74, 0], "the namespace is not UTF-8"),
            // Truncate: 2 relations announced, 1 given; then -1 relations.
            (Array("T".utf8) + [0, 0, 0, 2, 0, 0, 0, 0, 1], "2 relations in 4 bytes"),
            (Array("T".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0], "-1 relations in 0 bytes"),
            // Message: transactional, position 0/1, prefix "p", content of -5 bytes.
            (Array("M".utf8) + [1, 0, 0, 0, 0, 0, 0, 0, 1, 0x70, 0, 0xFF, 0xFF, 0xFF, 0xFB], "a content length of -5"),
        ] as [([UInt8], String)])
    func corrupted(bytes: [UInt8], reason: String) {
        let error = #expect(throws: ReplicationDecodingError.self) { try PgOutput.Message(decoding: bytes) }
        #expect(error?.reason == reason)
    }

    @Test("random bytes behind each kind never trap; what decodes encodes back to the same bytes")
    func random() throws {
        var generator = SplitMix64(seed: 0x5155_4952_4521)
        let kinds = Array("BCORYIUDTMKNnutbkw".utf8)
        var decoded = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0..<48, using: &generator)
            var bytes = [kinds.randomElement(using: &generator)!]
            for _ in 0..<length {
                // Small values and markers often, so that counts and lengths are sometimes right.
                bytes.append(
                    Bool.random(using: &generator)
                        ? UInt8.random(in: 0...3, using: &generator) : kinds.randomElement(using: &generator)!)
            }
            if let message = try? PgOutput.Message(decoding: bytes) {
                decoded += 1
                #expect(message.encoded == bytes)
            }
            if let frame = try? ReplicationMessage(decoding: bytes) { #expect(frame.encoded == bytes) }
        }
        #expect(decoded > 0, "some random inputs decode, so the round trip is checked")
    }
}

/// A small deterministic generator (SplitMix64), so that a failing random input is the same on every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
