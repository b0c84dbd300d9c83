import QuireCore
import Testing

@Suite("An exact decimal through Quire's JSON")
struct DecimalJSONTests {
    @Test("a decimal is checked against JSON's grammar of a number")
    func grammar() {
        for valid in ["0", "-0", "1.50", "12345678901234567890.123456789", "1e+100", "1E-5", "-0.5e3"] {
            #expect(JSONDecimal(valid)?.text == valid, "\(valid)")
        }
        for invalid in ["", "-", "NaN", "Infinity", ".5", "1.", "01", "+1", "1e", "1e+", "1.5.2", " 1", "0x10", "1_0"] {
            #expect(JSONDecimal(invalid) == nil, "\(invalid)")
        }
    }

    @Test("the writer copies its text; the parser keeps a number's text when asked; an item carries it unchanged")
    func roundTrip() throws {
        let text = "12345678901234567890.000000000000000001"
        let value: JSONValue = ["amount": .decimal(JSONDecimal(text)!), "n": 1]
        let encoded = JSONWriter.encode(value)
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"amount":\#(text),"n":1}"#)
        #expect(try JSONParser(keepsNumberText: true).parse(encoded) == value)
        #expect(try JSONParser().parse(encoded)["amount"] == .double(Double(text)!), "rounded without the option")
        #expect(try JSONParser(keepsNumberText: true).parse("1.0") == .decimal(JSONDecimal("1.0")!))
        #expect(try JSONParser(keepsNumberText: true).parse("7") == .int(7))
        let op: JSONValue = ["op": "insertItems", "section": "s", "items": [["id": "a", "type": "t", "data": value]]]
        guard case .insertItems(let items, _, _) = try ListOp.decode(op) else {
            Issue.record("not an insert")
            return
        }
        let version = try ListVersion(document: ["sections": [["id": "s", "items": []]]]).applying([
            .insertItems(items: items, target: .section("s"), anchor: .end)
        ])
        #expect(String(decoding: version.documentBytes, as: UTF8.self).contains(#""amount":\#(text)"#))
    }
}
