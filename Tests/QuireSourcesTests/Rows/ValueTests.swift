import QuireCore
import QuireSources
import Testing

@Suite("PostgreSQL's text of a value, as JSON")
struct ValueTests {
    /// The compact JSON of `text` as a value of `type`.
    func json(_ text: String?, _ type: PostgresType) -> String {
        PostgresValue.json(text, type: type).description
    }

    @Test("integers are JSON integers")
    func integers() {
        #expect(json("42", .int2) == "42" && json("-7", .int4) == "-7")
        #expect(json("9223372036854775807", .int8) == "9223372036854775807")
        #expect(PostgresValue.json("-9223372036854775808", type: .int8) == .int(.min))
    }

    @Test("real, double precision and numeric are numbers written exactly as PostgreSQL printed them")
    func decimals() {
        #expect(json("1.5", .float4) == "1.5" && json("1e+100", .float8) == "1e+100")
        #expect(json("-0", .float8) == "-0" && json("1.2345679e-05", .float4) == "1.2345679e-05")
        #expect(json("12345678901234567890.000000000000000001", .numeric) == "12345678901234567890.000000000000000001")
        #expect(json("1.50", .numeric) == "1.50" && json("0", .numeric) == "0" && json("-0.001", .numeric) == "-0.001")
        #expect(PostgresValue.json("1.50", type: .numeric) == .decimal(JSONDecimal("1.50")!))
    }

    @Test("NaN and the infinities, which JSON has no number for, are the strings PostgreSQL printed")
    func nonFinite() {
        for type: PostgresType in [.float4, .float8, .numeric] {
            #expect(PostgresValue.json("NaN", type: type) == "NaN")
            #expect(PostgresValue.json("Infinity", type: type) == "Infinity")
            #expect(PostgresValue.json("-Infinity", type: type) == "-Infinity")
        }
    }

    @Test("booleans, NULL, json and jsonb")
    func others() {
        #expect(json("t", .bool) == "true" && json("f", .bool) == "false")
        for type: PostgresType in [.int4, .numeric, .bool, .text, .json, PostgresType(oid: 1007)] {
            #expect(PostgresValue.json(nil, type: type) == .null)
        }
        #expect(json(#"{"b": [1, 2.50, null], "a": "x"}"#, .jsonb) == #"{"a":"x","b":[1,2.50,null]}"#)
        #expect(json("123456789012345678901234567890", .json) == "123456789012345678901234567890")
        #expect(json(#""just a string""#, .json) == #""just a string""#)
    }

    @Test("everything else is its text, a string")
    func strings() {
        let texts: [(String, PostgresType)] = [
            ("hello", .text), ("2026-12-01 10:00:00+00", .timestamptz), ("2026-12-01", .date),
            ("1 day 02:00:00", .interval), ("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", .uuid),
            ("open", PostgresType(oid: 16_390)),
            (#"\x0102"#, .bytea), ("ab  ", .bpchar),
        ]
        for (text, type) in texts {
            #expect(PostgresValue.json(text, type: type) == .string(text), "\(type)")
        }
        #expect(PostgresValue.json("not a number", type: .int4) == "not a number")
        #expect(PostgresValue.json("{not json", type: .jsonb) == "{not json")
    }

    @Test("arrays are JSON arrays, each element by the element's type")
    func arrays() {
        #expect(json("{1,2,NULL}", PostgresType(oid: 1007)) == "[1,2,null]")
        #expect(json("{{1,2},{3,4}}", PostgresType(oid: 1005)) == "[[1,2],[3,4]]")
        #expect(
            json(#"{"a b",NULL,"NULL","q\"uote","back\\slash",plain}"#, PostgresType(oid: 1009))
                == #"["a b",null,"NULL","q\"uote","back\\slash","plain"]"#)
        #expect(json("{t,f}", PostgresType(oid: 1000)) == "[true,false]")
        #expect(json("{1.50,NaN,-Infinity}", PostgresType(oid: 1231)) == #"[1.50,"NaN","-Infinity"]"#)
        #expect(json(#"{"{\"a\": 1}",NULL}"#, PostgresType(oid: 3807)) == #"[{"a":1},null]"#)
        #expect(json("{}", PostgresType(oid: 1009)) == "[]")
        #expect(json("[0:1]={7,8}", PostgresType(oid: 1016)) == "[7,8]")
        #expect(json(#"{"2026-12-01 10:00:00+00"}"#, PostgresType(oid: 1185)) == #"["2026-12-01 10:00:00+00"]"#)
        #expect(json("{(1,1),(0,0);(2,2),(1,1)}", PostgresType(oid: 1020)) == #"["(1,1),(0,0)","(2,2),(1,1)"]"#)
        #expect(json("{1,2", PostgresType(oid: 1007)) == #""{1,2""#, "not an array's text: kept as a string")
    }

    @Test("array text: quotes, escapes, NULL, nesting, spaces and what is refused")
    func arrayText() {
        #expect(
            PostgresArray.parse(#"{ a , "b c" ,null, "" }"#)
                == .array([.element("a"), .element("b c"), .null, .element("")]))
        #expect(PostgresArray.parse(#"{a\,b}"#) == .array([.element("a,b")]))
        #expect(PostgresArray.parse(#"{"\N\U\L\L"}"#) == .array([.element("NULL")]))
        #expect(PostgresArray.parse("{{},{}}") == .array([.array([]), .array([])]))
        for bad in [
            "", "{", "}", "{a", "{a,}", "{,a}", "{a}b", #"{"a}"#, "{a\"b}", "1,2", "[1:2]{1,2}", "{{{{{{{1}}}}}}}",
        ] {
            #expect(PostgresArray.parse(bad) == nil, "\(bad)")
        }
        #expect(PostgresArray.parse("{{{{{{1}}}}}}") != nil, "six levels, PostgreSQL's most")
    }
}
