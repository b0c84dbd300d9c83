import Testing

@testable import QuireCore

@Suite("JSON parser and writer")
struct JSONTests {
    let parser = JSONParser()

    @Test func parsesEveryKindOfValue() throws {
        let value = try parser.parse(
            #" { "a" : [1, -2.5, 3e2, true, false, null, "x\n\"\u00e9\ud83d\ude00"], "b": {} } "#)
        #expect(
            value
                == .object([
                    "a": .array([
                        .int(1), .double(-2.5), .double(300), .bool(true), .bool(false), .null, .string("x\n\"é😀"),
                    ]),
                    "b": .object([:]),
                ]))
        #expect(try parser.parse("12345678901234567890") == .double(Double("12345678901234567890")!))
        #expect(try parser.parse("-0") == .int(0))
    }

    @Test(arguments: [
        ("", 0), ("[1,]", 3), ("{\"a\":1,}", 7), ("01", 1), ("[1 2]", 3), ("\"abc", 0), ("{\"a\" 1}", 5),
        ("tru", 0), ("[\"\\x\"]", 2), ("\"\\ud800\"", 7), ("1.", 2), ("{\"a\":1,\"a\":2}", 7), ("[1]x", 3),
        ("\"a\u{01}\"", 2), ("-", 1), ("1e", 2), ("{1:2}", 1),
    ])
    func rejectsMalformedInputWithItsOffset(text: String, offset: Int) {
        #expect(throws: JSONParseError.self) { try parser.parse(text) }
        do {
            _ = try parser.parse(text)
        } catch {
            #expect(error.offset == offset, "\(text): \(error)")
        }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try parser.parse([0x22, 0xFF, 0x22]) }
    }

    @Test func limitsNesting() throws {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParseError.self) { try parser.parse(deep) }
        _ = try JSONParser(maxDepth: 100).parse(deep)
    }

    @Test func writesCanonicalCompactBytes() {
        let value: JSONValue = ["b": [1, 2.5, "q\"\\\n\u{01}é"], "a": nil, "c": true]
        #expect(value.description == #"{"a":null,"b":[1,2.5,"q\"\\\n\u0001é"],"c":true}"#)
        #expect(JSONValue.double(1e21).description == "1e+21")
        #expect(JSONValue.double(3).description == "3.0")
        #expect(JSONValue.int(Int64.min).description == "-9223372036854775808")
    }

    @Test(
        "strings are written whole when nothing needs escaping, and escaped byte by byte otherwise",
        arguments: [
            ("", #""""#), ("id", #""id""#), ("Rb6J2y76SeC4nGwwfVHiIg", #""Rb6J2y76SeC4nGwwfVHiIg""#),
            ("café ☕ 😀 and a long tail", #""café ☕ 😀 and a long tail""#),
            ("a long string that ends in a quote\"", #""a long string that ends in a quote\"""#),
            ("tab\there", #""tab\there""#), ("\u{7F}del", "\"\u{7F}del\""), ("back\\slash", #""back\\slash""#),
            ("\u{1F}", #""\u001f""#),
        ])
    func writesStrings(text: String, written: String) throws {
        var out: [UInt8] = []
        JSONWriter.writeString(text, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == written)
        #expect(try parser.parse(out) == .string(text))
    }

    @Test(arguments: [0, 7, 9, 10, 42, 99, 100, 12_345, -1, -42, Int.max, Int.min])
    func writesIntegers(number: Int) {
        var out: [UInt8] = []
        JSONWriter.writeInteger(number, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == String(number))
    }

    @Test func writerOutputParsesBackToTheSameValue() throws {
        var random = SeededGenerator(seed: 42)
        for _ in 0..<500 {
            let value = randomValue(depth: 0, random: &random)
            #expect(try parser.parse(JSONWriter.encode(value)) == value)
        }
    }

    /// Random and mutated inputs never crash the parser: they parse or throw.
    @Test func neverCrashesOnGarbage() {
        var random = SeededGenerator(seed: 7)
        let alphabet = Array(#"{}[],:"\ u0123456789.eE+-tfnrlasx"#.utf8) + [0x00, 0x1F, 0xC3, 0xA9, 0xFF]
        for _ in 0..<5_000 {
            let length = Int.random(in: 0..<24, using: &random)
            let bytes = (0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }
            _ = try? parser.parse(bytes)
        }
    }

    private func randomValue(depth: Int, random: inout SeededGenerator) -> JSONValue {
        switch Int.random(in: 0..<(depth < 3 ? 8 : 6), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .int(Int64.random(in: Int64.min...Int64.max, using: &random))
        case 3: return .double(Double.random(in: -1e6...1e6, using: &random))
        case 4:
            return .string(
                String(
                    (0..<Int.random(in: 0..<6, using: &random)).map { _ in
                        ["a", "\"", "\\", "\n", "é", "😀", "\u{7}"][Int.random(in: 0..<7, using: &random)]
                    }))
        case 5: return .string("")
        case 6:
            return .array(
                (0..<Int.random(in: 0..<4, using: &random)).map { _ in randomValue(depth: depth + 1, random: &random) })
        default:
            var members: [String: JSONValue] = [:]
            for index in 0..<Int.random(in: 0..<4, using: &random) {
                members["k\(index)"] = randomValue(depth: depth + 1, random: &random)
            }
            return .object(members)
        }
    }
}
