import PropertyBased
import Testing

@testable import QuireCore

/// An item as a list version encodes it (canonical bytes), for a filter to read.
private func filterItem(id: String = "item-1", type: String = "message", data: JSONValue) -> FilterItem {
    FilterItem(encoded: ItemDraft(id: id, type: type, data: JSONWriter.encode(data), children: nil).encoded)
}

private func filter(_ text: String) throws -> ListFilter {
    try ListFilter(text: text)
}

/// The error `text` is refused with; a failure when it is accepted.
private func refusal(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> FilterError? {
    do {
        let accepted = try ListFilter(text: text)
        Issue.record("accepted \(text) as \(accepted.canonicalText)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// `{"field":"id","eq":"t<index>"}`, a different term for each index.
private func term(_ index: Int) -> String {
    #"{"field":"id","eq":"t\#(index)"}"#
}

@Suite("Filter grammar")
struct FilterGrammarTests {
    @Test(arguments: [
        ("[]", "a filter must be an object, not an array"),
        (#""all""#, "a filter must be an object, not a string"),
        ("null", "a filter must be an object, not null"),
        ("{}", #"a filter must be a term ({"field": …, <operator>: …}) or all, any or not"#),
        (#"{"field":"id","eq":1,"foo":2}"#, #"unknown member "foo""#),
        (#"{"field":"id","EQ":1}"#, #"unknown member "EQ""#),
        (#"{"eq":1}"#, #"a term needs "field""#),
        (
            #"{"field":"id"}"#,
            #"a term needs one operator besides "field": eq, ne, in, lt, lte, gt, gte, contains, exists"#
        ),
        (#"{"field":"id","eq":1,"ne":2}"#, #"a term has exactly one operator, found "eq", "ne""#),
        (#"{"field":"id","gt":1,"lt":2,"in":[1]}"#, #"a term has exactly one operator, found "gt", "in", "lt""#),
        (#"{"field":1,"eq":1}"#, #""field" must be a string, not a number"#),
        (#"{"field":"foo","eq":1}"#, #""field" must be id, type or data.<key>[.<key>…], not "foo""#),
        (#"{"field":"data","eq":1}"#, #""field" must be id, type or data.<key>[.<key>…], not "data""#),
        (#"{"field":"ID","eq":1}"#, #""field" must be id, type or data.<key>[.<key>…], not "ID""#),
        (#"{"field":"data.","eq":1}"#, #""field" "data." has an empty key: write data.<key>[.<key>…]"#),
        (#"{"field":"data..x","eq":1}"#, #""field" "data..x" has an empty key: write data.<key>[.<key>…]"#),
        (#"{"field":"data.x.","eq":1}"#, #""field" "data.x." has an empty key: write data.<key>[.<key>…]"#),
        (#"{"field":"id","eq":[1]}"#, #""eq" must be a string, number, boolean or null, not an array"#),
        (#"{"field":"id","ne":{}}"#, #""ne" must be a string, number, boolean or null, not an object"#),
        (
            #"{"field":"id","in":[]}"#,
            #""in" must be an array of 1 to 100 scalars (a string, number, boolean or null), not 0 values"#
        ),
        (
            #"{"field":"id","in":"a"}"#,
            #""in" must be an array of 1 to 100 scalars (a string, number, boolean or null), not a string"#
        ),
        (#"{"field":"id","in":[1,{}]}"#, #""in"[1] must be a string, number, boolean or null, not an object"#),
        (#"{"field":"id","in":[[1]]}"#, #""in"[0] must be a string, number, boolean or null, not an array"#),
        (#"{"field":"id","lt":true}"#, #""lt" must be a number or a string, not a boolean"#),
        (#"{"field":"id","lte":null}"#, #""lte" must be a number or a string, not null"#),
        (#"{"field":"id","gt":[1]}"#, #""gt" must be a number or a string, not an array"#),
        (#"{"field":"id","gte":{}}"#, #""gte" must be a number or a string, not an object"#),
        (#"{"field":"id","contains":""}"#, #""contains" must be a string of 1 to 64 bytes"#),
        (#"{"field":"id","contains":5}"#, #""contains" must be a string of 1 to 64 bytes"#),
        (#"{"field":"id","exists":"yes"}"#, #""exists" must be true or false, not a string"#),
        (#"{"field":"id","exists":1}"#, #""exists" must be true or false, not a number"#),
        (#"{"field":"id","exists":null}"#, #""exists" must be true or false, not null"#),
        (#"{"all":[]}"#, #""all" must be an array of 1 or more filters"#),
        (#"{"any":{"field":"id","eq":1}}"#, #""any" must be an array of 1 or more filters"#),
        (#"{"all":[{"field":"id","eq":1}],"field":"id"}"#, #""all" cannot have other members (found "field")"#),
        (#"{"all":[{"field":"id","eq":1}],"any":[]}"#, #""all" cannot have other members (found "any")"#),
        (#"{"not":{"field":"id","eq":1},"eq":1}"#, #""not" cannot have other members (found "eq")"#),
        (#"{"all":[1]}"#, "all[0]: a filter must be an object, not a number"),
        (#"{"not":[]}"#, "not: a filter must be an object, not an array"),
        (#"{"not":{"field":"id","eq":1,"foo":1}}"#, #"not: unknown member "foo""#),
        (
            #"{"all":[{"field":"id","eq":1},{"field":"id","eq":2},{"any":[{"field":"data.s","contains":""}]}]}"#,
            #"all[2].any[0]: "contains" must be a string of 1 to 64 bytes"#
        ),
        (
            #"{"any":[{"field":"id","eq":1},{"not":{"all":[{"field":"data.x..y","eq":1}]}}]}"#,
            #"any[1].not.all[0]: "field" "data.x..y" has an empty key: write data.<key>[.<key>…]"#
        ),
    ])
    func refusesWithTheOffendingPart(text: String, detail: String) {
        #expect(refusal(text)?.description == detail)
    }

    @Test func namesTheKindOfEachRefusal() {
        #expect(refusal("[]")?.kind == .notAFilter)
        #expect(refusal(#"{"field":"id","eq":1,"x":1}"#)?.kind == .unknownMember)
        #expect(refusal(#"{"field":"id"}"#)?.kind == .missingMember)
        #expect(refusal(#"{"field":"id","eq":1,"ne":1}"#)?.kind == .tooManyOperators)
        #expect(refusal(#"{"field":"idx","eq":1}"#)?.kind == .invalidField)
        #expect(refusal(#"{"field":"id","in":[]}"#)?.kind == .invalidValue)
        #expect(refusal("{")?.kind == .invalidJSON)
        #expect(refusal("{")?.path == "")
        let nested = refusal(#"{"all":[{"any":[{"field":"id","eq":{}}]}]}"#)
        #expect(nested?.path == "all[0].any[0]")
        #expect(nested?.reason == #""eq" must be a string, number, boolean or null, not an object"#)
    }

    @Test func aSyntaxErrorIsAFilterError() {
        #expect(
            refusal(#"{"field":"id","eq":}"#)?.description
                == "filter is not JSON: invalid JSON at byte 19: unexpected character, expected a value")
        #expect(refusal("")?.kind == .invalidJSON)
        #expect(refusal(#"{"field":"id","eq":1} x"#)?.kind == .invalidJSON)
        #expect(refusal(#"{"field":"id","eq":1,"eq":2}"#)?.kind == .invalidJSON)  // a duplicate key
    }

    @Test func inTakesOneToAHundredScalars() throws {
        let hundred = (0..<100).map(String.init).joined(separator: ",")
        _ = try filter(#"{"field":"data.n","in":[\#(hundred)]}"#)
        _ = try filter(#"{"field":"data.n","in":[null]}"#)
        _ = try filter(#"{"field":"data.n","in":["a",1,true,null,2.5]}"#)
        #expect(
            refusal(#"{"field":"data.n","in":[\#(hundred),100]}"#)?.description
                == #""in" must be an array of 1 to 100 scalars (a string, number, boolean or null), not 101 values"#)
        // Counted as written: duplicates count.
        #expect(
            refusal(#"{"field":"data.n","in":[\#(Array(repeating: "1", count: 101).joined(separator: ","))]}"#) != nil)
    }

    @Test func containsTakesOneToSixtyFourBytesAsWritten() throws {
        _ = try filter(#"{"field":"id","contains":"a"}"#)
        _ = try filter(#"{"field":"id","contains":"\#(String(repeating: "a", count: 64))"}"#)
        _ = try filter(#"{"field":"id","contains":"\#(String(repeating: "é", count: 32))"}"#)  // 64 bytes
        // Folding may lengthen the text (ß → ss); the limit is on what was written.
        _ = try filter(#"{"field":"id","contains":"\#(String(repeating: "ß", count: 32))"}"#)
        for text in [
            String(repeating: "a", count: 65), String(repeating: "é", count: 33),
            "\(String(repeating: "a", count: 63))é",
        ] {
            #expect(
                refusal(#"{"field":"id","contains":"\#(text)"}"#)?.description
                    == #""contains" must be a string of 1 to 64 bytes"#)
        }
    }

    @Test func acceptsFourLevelsOfCombinatorsAndRefusesFive() throws {
        _ = try filter(#"{"all":[{"any":[{"not":{"all":[\#(term(0))]}}]}]}"#)
        _ = try filter(#"{"not":{"not":{"not":{"not":\#(term(0))}}}}"#)
        #expect(
            refusal(#"{"all":[{"any":[{"not":{"all":[{"any":[\#(term(0))]}]}}]}]}"#)?.description
                == #"all[0].any[0].not.all[0]: "any" nests too deep: at most 4 levels of all, any and not"#)
        #expect(
            refusal(#"{"not":{"not":{"not":{"not":{"not":\#(term(0))}}}}}"#)?.description
                == #"not.not.not.not: "not" nests too deep: at most 4 levels of all, any and not"#)
        #expect(refusal(#"{"not":{"not":{"not":{"not":{"not":\#(term(0))}}}}}"#)?.kind == .tooDeep)
    }

    @Test func acceptsThirtyTwoTermsAndRefusesMore() throws {
        let terms = (0..<40).map(term)
        _ = try filter(#"{"all":[\#(terms[0..<32].joined(separator: ","))]}"#)
        #expect(
            refusal(#"{"all":[\#(terms[0..<33].joined(separator: ","))]}"#)?.description
                == "too many terms (33, at most 32)")
        // Counted across levels, as written (repeats count, although the canonical form drops them).
        let nested =
            #"{"any":[{"all":[\#(terms[0..<20].joined(separator: ","))]},"#
            + #"{"not":{"any":[\#(terms[0..<20].joined(separator: ","))]}}]}"#
        #expect(refusal(nested)?.description == "too many terms (40, at most 32)")
        #expect(refusal(nested)?.kind == .tooManyTerms)
    }

    @Test func quotesLongValuesShortly() {
        let long = String(repeating: "x", count: 200)
        let detail = refusal(#"{"field":"\#(long)","eq":1}"#)?.description ?? ""
        #expect(detail.contains(#"not "\#(String(repeating: "x", count: 64))…""#))
        #expect(detail.count < 200)
        #expect(refusal(#"{"field":"id","eq":1,"a\"b":1}"#)?.description == #"unknown member "a\"b""#)
    }

    @Test func readsEveryField() throws {
        #expect(try filter(#"{"field":"id","eq":"a"}"#) == .term(FilterTerm(field: .id, op: .eq(.string("a")))))
        #expect(try filter(#"{"field":"type","eq":"a"}"#) == .term(FilterTerm(field: .type, op: .eq(.string("a")))))
        #expect(
            try filter(#"{"field":"data.author.name","exists":true}"#)
                == .term(FilterTerm(field: .data(["author", "name"]), op: .exists(true))))
        #expect(
            try filter(#"{"field":"data.id","eq":"a"}"#)
                == .term(FilterTerm(field: .data(["id"]), op: .eq(.string("a")))))
        #expect(FilterField(path: "data.a b.ü") == .data(["a b", "ü"]))
        #expect(FilterField.data(["author", "name"]).path == "data.author.name")
    }
}

@Suite("Filter canonical form")
struct FilterCanonicalTests {
    private func expectSame(_ lhs: String, _ rhs: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (left, right) = (try filter(lhs), try filter(rhs))
        #expect(left == right, sourceLocation: sourceLocation)
        #expect(left.hashValue == right.hashValue, sourceLocation: sourceLocation)
        #expect(left.canonicalText == right.canonicalText, sourceLocation: sourceLocation)
    }

    private func expectDifferent(_ lhs: String, _ rhs: String, sourceLocation: SourceLocation = #_sourceLocation) throws
    {
        let (left, right) = (try filter(lhs), try filter(rhs))
        #expect(left != right, sourceLocation: sourceLocation)
        #expect(left.canonicalText != right.canonicalText, sourceLocation: sourceLocation)
    }

    @Test func writesTheContractsExampleOneWay() throws {
        let example = try filter(
            #"""
            { "all": [ { "field": "type", "eq": "message" },
                       { "field": "data.unread", "eq": true },
                       { "not": { "field": "data.from", "in": ["system", "bot"] } },
                       { "any": [ { "field": "data.subject", "contains": "Lunch" },
                                  { "field": "data.priority", "gte": 2 } ] } ] }
            """#)
        #expect(
            example.canonicalText
                == #"{"all":[{"field":"type","eq":"message"},{"field":"data.unread","eq":true},"#
                + #"{"any":[{"field":"data.priority","gte":2},{"field":"data.subject","contains":"lunch"}]},"#
                + #"{"not":{"field":"data.from","in":["bot","system"]}}]}"#
        )
    }

    @Test func orderInsideAllAnyAndInDoesNotCount() throws {
        try expectSame(
            #"{"all":[\#(term(1)),\#(term(2)),\#(term(3))]}"#, #"{"all":[\#(term(3)),\#(term(1)),\#(term(2))]}"#)
        try expectSame(#"{"any":[\#(term(1)),{"not":\#(term(2))}]}"#, #"{"any":[{"not":\#(term(2))},\#(term(1))]}"#)
        try expectSame(#"{"field":"id","in":["b","a","c"]}"#, #"{"field":"id","in":["c","b","a"]}"#)
        try expectSame(#"{"field":"id","in":["b","a","b","a"]}"#, #"{"field":"id","in":["a","b"]}"#)
        try expectSame(#"{"field":"id","in":[1,"1",true,null]}"#, #"{"field":"id","in":[null,true,"1",1.0]}"#)
        #expect(
            try filter(#"{"field":"id","in":["b",1,null,"a",false]}"#).canonicalText
                == #"{"field":"id","in":[null,false,1,"a","b"]}"#)
    }

    @Test func numbersCompareByValue() throws {
        try expectSame(#"{"field":"data.n","eq":1}"#, #"{"field":"data.n","eq":1.0}"#)
        try expectSame(#"{"field":"data.n","eq":100}"#, #"{"field":"data.n","eq":1e2}"#)
        try expectSame(#"{"field":"data.n","eq":0}"#, #"{"field":"data.n","eq":-0}"#)
        try expectSame(#"{"field":"data.n","eq":0}"#, #"{"field":"data.n","eq":-0.0}"#)
        try expectSame(#"{"field":"data.n","lt":0}"#, #"{"field":"data.n","lt":-0.0}"#)
        try expectSame(#"{"field":"data.n","in":[1,2]}"#, #"{"field":"data.n","in":[2.0,1,1.0]}"#)
        try expectDifferent(#"{"field":"data.n","eq":1}"#, #"{"field":"data.n","eq":"1"}"#)
        try expectDifferent(#"{"field":"data.n","eq":1}"#, #"{"field":"data.n","eq":true}"#)
        #expect(try filter(#"{"field":"data.n","eq":-0.0}"#).canonicalText == #"{"field":"data.n","eq":0}"#)
        #expect(try filter(#"{"field":"data.n","eq":2.50}"#).canonicalText == #"{"field":"data.n","eq":2.5}"#)
        #expect(try filter(#"{"field":"data.n","gt":1e20}"#).canonicalText == #"{"field":"data.n","gt":1e+20}"#)
        #expect(try filter(#"{"field":"data.n","gt":-7}"#).canonicalText == #"{"field":"data.n","gt":-7}"#)
        #expect(FilterScalar.number(-0.0) == .number(0))
        #expect(FilterScalar.number(-0.0).hashValue == FilterScalar.number(0).hashValue)
    }

    @Test func rewritesWhatMeansTheSame() throws {
        // Nested all (any) merged, single members unwrapped, repeats dropped.
        try expectSame(
            #"{"all":[\#(term(1)),{"all":[\#(term(2)),\#(term(3))]}]}"#,
            #"{"all":[\#(term(1)),\#(term(2)),\#(term(3))]}"#)
        try expectSame(#"{"any":[{"any":[\#(term(1))]},\#(term(2))]}"#, #"{"any":[\#(term(1)),\#(term(2))]}"#)
        try expectSame(#"{"all":[\#(term(1))]}"#, term(1))
        try expectSame(#"{"all":[\#(term(1)),\#(term(1))]}"#, term(1))
        try expectSame(#"{"field":"id","in":["t1"]}"#, term(1))
        // not(not(x)) is x; not of eq, ne and exists is the opposite term.
        try expectSame(#"{"not":{"not":\#(term(1))}}"#, term(1))
        try expectSame(#"{"not":\#(term(1))}"#, #"{"field":"id","ne":"t1"}"#)
        try expectSame(#"{"not":{"field":"id","ne":"t1"}}"#, term(1))
        try expectSame(#"{"not":{"field":"data.x","exists":true}}"#, #"{"field":"data.x","exists":false}"#)
        #expect(try filter(#"{"not":{"not":{"not":\#(term(1))}}}"#).canonicalText == #"{"field":"id","ne":"t1"}"#)
        // An any inside an all stays: that would change the meaning.
        try expectDifferent(
            #"{"all":[\#(term(1)),{"any":[\#(term(2)),\#(term(3))]}]}"#,
            #"{"all":[\#(term(1)),\#(term(2)),\#(term(3))]}"#)
        try expectDifferent(#"{"all":[\#(term(1)),\#(term(2))]}"#, #"{"any":[\#(term(1)),\#(term(2))]}"#)
        try expectDifferent(#"{"not":{"field":"id","lt":"a"}}"#, #"{"field":"id","gte":"a"}"#)  // absent fields differ
    }

    @Test func containsIsStoredFolded() throws {
        try expectSame(#"{"field":"data.s","contains":"STRASSE"}"#, #"{"field":"data.s","contains":"Straße"}"#)
        try expectSame(#"{"field":"data.s","contains":"ΟΔΟΣ"}"#, #"{"field":"data.s","contains":"οδος"}"#)
        #expect(
            try filter(#"{"field":"data.s","contains":"Straße"}"#)
                == .term(FilterTerm(field: .data(["s"]), op: .contains("strasse"))))
        #expect(FilterOp.containing("ẞ") == .contains("ss"))
    }

    @Test func handBuiltFiltersCompareByTheirCanonicalForm() {
        let a = ListFilter.term(FilterTerm(field: .type, op: .eq(.string("a"))))
        let b = ListFilter.term(FilterTerm(field: .data(["n"]), op: .in([.number(2), .number(1), .number(2)])))
        #expect(ListFilter.all([a, b]) == .all([b, a]))
        #expect(ListFilter.all([a, b]).hashValue == ListFilter.all([b, a]).hashValue)
        #expect(ListFilter.all([a, .all([b])]) == .all([b, a]))
        #expect(ListFilter.not(.not(a)) == a)
        #expect(Set([ListFilter.all([a, b]), .all([b, a]), .any([a, b])]).count == 2)
        // Strings compare by bytes: two spellings of é are different values (Swift's String says equal).
        let composed = FilterScalar.string("\u{E9}")
        let decomposed = FilterScalar.string("e\u{301}")
        #expect(composed != decomposed)
        #expect(FilterField.data(["\u{E9}"]) != .data(["e\u{301}"]))
    }

    @Test func canonicalTextReadsBackToTheSameFilter() throws {
        for text in [
            #"{"all":[{"field":"type","eq":"message"},{"not":{"field":"data.from","in":["a\"b\\c",null,-2.5e-7]}}]}"#,
            #"{"any":[{"field":"data.a.b","exists":false},"#
                + #"{"field":"id","lte":"é"},{"field":"type","gt":1234567890123456789}]}"#,
            #"{"field":"data.s","contains":"ΣΊΣΥΦΟΣ ﬁ İ"}"#,
        ] {
            let parsed = try filter(text)
            let again = try filter(parsed.canonicalText)
            #expect(again == parsed)
            #expect(again.canonicalText == parsed.canonicalText)
            #expect(FilterOrder.compare(parsed.canonicalized(), parsed) == 0)  // the parser gives canonical form
        }
    }
}

@Suite("Filter matching")
struct FilterMatchingTests {
    /// One item with a value of every kind, and ones to compare bytes and escapes.
    static let data: JSONValue = [
        "s": "Hello", "n": 2, "f": 2.5, "t": true, "z": nil, "o": ["k": "v", "deep": ["x": 1]], "a": [1, "Hello"],
        "e": "é", "big": .int(123_456_789_012_345_678), "q": "say \"hi\"\n", "we\"ird": 1, "neg": .double(-0.0),
        "huge": .double(1e20), "empty": "",
    ]

    @Test(arguments: [
        // eq: same kind and value only; numbers by value; objects and arrays equal nothing; absent never.
        (#"{"field":"id","eq":"item-1"}"#, true), (#"{"field":"type","eq":"message"}"#, true),
        (#"{"field":"type","eq":"Message"}"#, false), (#"{"field":"data.s","eq":"Hello"}"#, true),
        (#"{"field":"data.s","eq":"hello"}"#, false), (#"{"field":"data.n","eq":2}"#, true),
        (#"{"field":"data.n","eq":2.0}"#, true), (#"{"field":"data.n","eq":"2"}"#, false),
        (#"{"field":"data.f","eq":2.5}"#, true), (#"{"field":"data.t","eq":true}"#, true),
        (#"{"field":"data.t","eq":false}"#, false), (#"{"field":"data.t","eq":1}"#, false),
        (#"{"field":"data.z","eq":null}"#, true), (#"{"field":"data.s","eq":null}"#, false),
        (#"{"field":"data.nope","eq":null}"#, false), (#"{"field":"data.o","eq":"v"}"#, false),
        (#"{"field":"data.a","eq":1}"#, false), (#"{"field":"data.empty","eq":""}"#, true),
        (#"{"field":"data.big","eq":123456789012345678}"#, true), (#"{"field":"data.huge","eq":1e20}"#, true),
        (#"{"field":"data.neg","eq":0}"#, true), (#"{"field":"data.q","eq":"say \"hi\"\n"}"#, true),
        (#"{"field":"data.we\"ird","eq":1}"#, true), (#"{"field":"data.o.k","eq":"v"}"#, true),
        (#"{"field":"data.o.deep.x","eq":1}"#, true), (#"{"field":"data.s.x","eq":"Hello"}"#, false),
        // ne: the opposite of eq, so true on absent fields, objects, arrays and other kinds.
        (#"{"field":"data.s","ne":"x"}"#, true), (#"{"field":"data.s","ne":"Hello"}"#, false),
        (#"{"field":"data.nope","ne":1}"#, true), (#"{"field":"data.nope","ne":null}"#, true),
        (#"{"field":"data.o","ne":"v"}"#, true), (#"{"field":"data.a","ne":1}"#, true),
        (#"{"field":"data.z","ne":null}"#, false), (#"{"field":"data.n","ne":"2"}"#, true),
        (#"{"field":"data.n","ne":2.0}"#, false),
        // in: any of the values.
        (#"{"field":"data.n","in":[1,2,3]}"#, true), (#"{"field":"data.n","in":["2",true]}"#, false),
        (#"{"field":"data.s","in":["a","Hello"]}"#, true), (#"{"field":"data.z","in":[null,1]}"#, true),
        (#"{"field":"data.nope","in":[null]}"#, false), (#"{"field":"data.o","in":[1,"v"]}"#, false),
        (#"{"field":"data.t","in":[false,true]}"#, true), (#"{"field":"data.t","in":[false]}"#, false),
        (#"{"field":"data.q","in":["say \"hi\"\n","x"]}"#, true), (#"{"field":"id","in":["item-2","item-1"]}"#, true),
        // lt, lte, gt, gte: numbers with numbers, strings with strings by bytes; nothing else.
        (#"{"field":"data.n","lt":3}"#, true), (#"{"field":"data.n","lt":2}"#, false),
        (#"{"field":"data.n","lte":2}"#, true), (#"{"field":"data.n","gt":1.5}"#, true),
        (#"{"field":"data.n","gt":2}"#, false), (#"{"field":"data.n","gte":2}"#, true),
        (#"{"field":"data.f","gt":2}"#, true), (#"{"field":"data.big","gt":1e17}"#, true),
        (#"{"field":"data.s","lt":"I"}"#, true), (#"{"field":"data.s","lt":"Hello"}"#, false),
        (#"{"field":"data.s","lte":"Hello"}"#, true), (#"{"field":"data.s","gt":"Hell"}"#, true),
        (#"{"field":"data.s","gt":"hello"}"#, false), (#"{"field":"data.e","gt":"z"}"#, true),
        (#"{"field":"data.s","lt":5}"#, false), (#"{"field":"data.s","gte":0}"#, false),
        (#"{"field":"data.n","lt":"3"}"#, false), (#"{"field":"data.z","lt":1}"#, false),
        (#"{"field":"data.z","gte":""}"#, false), (#"{"field":"data.t","gt":0}"#, false),
        (#"{"field":"data.o","gt":"a"}"#, false), (#"{"field":"data.a","gt":0}"#, false),
        (#"{"field":"data.nope","lt":1}"#, false), (#"{"field":"data.nope","gte":""}"#, false),
        (#"{"field":"data.q","gt":"say \""}"#, true), (#"{"field":"data.empty","lt":"a"}"#, true),
        // contains: strings only, case-insensitive.
        (#"{"field":"data.s","contains":"ell"}"#, true), (#"{"field":"data.s","contains":"ELL"}"#, true),
        (#"{"field":"data.s","contains":"hello"}"#, true), (#"{"field":"data.s","contains":"hello!"}"#, false),
        (#"{"field":"data.s","contains":"xyz"}"#, false), (#"{"field":"data.n","contains":"2"}"#, false),
        (#"{"field":"data.nope","contains":"a"}"#, false), (#"{"field":"data.o","contains":"v"}"#, false),
        (#"{"field":"data.z","contains":"null"}"#, false), (#"{"field":"data.a","contains":"Hello"}"#, false),
        (#"{"field":"data.q","contains":"\"HI\""}"#, true), (#"{"field":"data.e","contains":"É"}"#, true),
        (#"{"field":"id","contains":"M-1"}"#, true), (#"{"field":"type","contains":"SAG"}"#, true),
        // exists: present (null included) or absent.
        (#"{"field":"data.z","exists":true}"#, true), (#"{"field":"data.z","exists":false}"#, false),
        (#"{"field":"data.nope","exists":false}"#, true), (#"{"field":"data.nope","exists":true}"#, false),
        (#"{"field":"data.o","exists":true}"#, true), (#"{"field":"data.o.k","exists":true}"#, true),
        (#"{"field":"data.s.k","exists":true}"#, false), (#"{"field":"data.a.0","exists":true}"#, false),
        (#"{"field":"id","exists":true}"#, true), (#"{"field":"data.we\"ird","exists":true}"#, true),
        // not turns around what it holds, absent fields included.
        (#"{"not":{"field":"data.nope","eq":1}}"#, true), (#"{"not":{"field":"data.s","eq":"Hello"}}"#, false),
        (#"{"not":{"field":"data.nope","lt":1}}"#, true), (#"{"not":{"field":"data.nope","ne":1}}"#, false),
        (#"{"not":{"field":"data.nope","contains":"a"}}"#, true),
        (#"{"not":{"not":{"field":"data.nope","eq":1}}}"#, false),
        // all and any, nested.
        (#"{"all":[{"field":"data.n","eq":2},{"field":"data.s","contains":"h"}]}"#, true),
        (#"{"all":[{"field":"data.n","eq":2},{"field":"data.s","contains":"x"}]}"#, false),
        (#"{"any":[{"field":"data.n","eq":3},{"field":"data.s","contains":"x"}]}"#, false),
        (#"{"any":[{"field":"data.n","eq":3},{"field":"data.nope","exists":false}]}"#, true),
        (
            #"{"all":[{"any":[{"field":"data.n","eq":3},{"not":{"field":"data.t","eq":false}}]},"#
                + #"{"not":{"any":[{"field":"type","eq":"x"},{"field":"data.o","exists":false}]}}]}"#,
            true
        ),
        (
            #"{"any":[{"all":[{"field":"data.n","eq":2},{"field":"data.z","ne":null}]},"#
                + #"{"not":{"all":[{"field":"id","contains":"item"}]}}]}"#,
            false
        ),
    ])
    func matchesEveryOperatorAsTheContractSays(text: String, expected: Bool) throws {
        let parsed = try filter(text)
        let item = filterItem(data: Self.data)
        #expect(parsed.matches(item) == expected)
        #expect(FilterMatcher(parsed).matches(item) == expected)
        #expect(try filter(parsed.canonicalText).matches(item) == expected)
    }

    @Test func readsItemsNotWrittenCanonically() throws {
        let spaced = FilterItem(
            encoded: Array(
                #" { "data" : { "x" : [ 1 , {"y":"}"} ] , "n" : -0 , "s":"A\u0042c" } ,"type": "t" , "id":"a\"" } "#
                    .utf8))
        #expect(try filter(#"{"field":"id","eq":"a\""}"#).matches(spaced))
        #expect(try filter(#"{"field":"type","eq":"t"}"#).matches(spaced))
        #expect(try filter(#"{"field":"data.n","eq":0}"#).matches(spaced))
        #expect(try filter(#"{"field":"data.s","eq":"ABc"}"#).matches(spaced))
        #expect(try filter(#"{"field":"data.s","contains":"bC"}"#).matches(spaced))
        #expect(try filter(#"{"field":"data.x","exists":true}"#).matches(spaced))
        #expect(spaced.value(at: .data(["n"])) == .number(0))
        #expect(spaced.value(at: .data(["s"])) == .string("ABc"))
        // A key spelled with an escape is the same key.
        let escapedKey = FilterItem(encoded: Array(#"{"id":"a","type":"t","data":{"\u006b":1}}"#.utf8))
        #expect(try filter(#"{"field":"data.k","eq":1}"#).matches(escapedKey))
        // A repeated key: the first counts.
        let repeated = FilterItem(encoded: Array(#"{"id":"a","id":"b","type":"t","data":{"k":1,"k":2}}"#.utf8))
        #expect(try filter(#"{"all":[{"field":"id","eq":"a"},{"field":"data.k","eq":1}]}"#).matches(repeated))
    }

    @Test func neverTrapsOnBytesThatAreNotJSON() throws {
        let filters = try [
            #"{"field":"id","eq":"a"}"#, #"{"field":"data.k","ne":1}"#, #"{"field":"data.k.j","exists":true}"#,
            #"{"field":"data.k","contains":"a"}"#, #"{"field":"type","gt":0}"#, #"{"field":"data.k","in":[1,"a"]}"#,
        ].map(filter)
        let inputs: [String] = [
            "", "{", "[", "\"", "{\"id\"", "{\"id\":", "{\"id\":\"a", "{\"id\":\"a\\", "{\"data\":{\"k\":",
            "{\"data\":{\"k\":\"\\u12", "{\"data\":{\"k\":tru", "{\"data\":{\"k\":1e", "{\"data\":{\"k\":{\"j\":[}}",
            "{\"id\":\"a\",\"type\":\"t\",\"data\":", "{\"id\":\"a\",\"type\":\"t\",\"data\":{\"k\":\"\\x\"}}", "nul",
        ]
        for input in inputs {
            var bytes = Array(input.utf8)
            for cut in 0...bytes.count {
                let item = FilterItem(encoded: Array(bytes[..<cut]))
                for filter in filters { _ = filter.matches(item) }
                _ = item.value(at: .data(["k"]))
            }
            bytes.append(0xFF)
            _ = filters.map { $0.matches(FilterItem(encoded: bytes)) }
        }
        let invalidUTF8 = FilterItem(encoded: [0x7B, 0x22, 0x69, 0x64, 0x22, 0x3A, 0x22, 0xC3, 0x22, 0x7D])
        #expect(try filter(#"{"field":"id","contains":"a"}"#).matches(invalidUTF8) == false)
    }

    @Test func readsScalarsForTheIndex() {
        let item = filterItem(data: Self.data)
        #expect(item.value(at: .id) == .string("item-1"))
        #expect(item.value(at: .type) == .string("message"))
        #expect(item.value(at: .data(["s"])) == .string("Hello"))
        #expect(item.value(at: .data(["n"])) == .number(2))
        #expect(item.value(at: .data(["f"])) == .number(2.5))
        #expect(item.value(at: .data(["t"])) == .bool(true))
        #expect(item.value(at: .data(["z"])) == .null)
        #expect(item.value(at: .data(["q"])) == .string("say \"hi\"\n"))
        #expect(item.value(at: .data(["o", "k"])) == .string("v"))
        #expect(item.value(at: .data(["o"])) == nil)
        #expect(item.value(at: .data(["a"])) == nil)
        #expect(item.value(at: .data(["nope"])) == nil)
        #expect(item.value(at: .data(["s", "x"])) == nil)
        if case .number(let zero) = item.value(at: .data(["neg"])) {
            #expect(zero == 0 && zero.sign == .plus)
        } else {
            Issue.record("data.neg is not a number")
        }
        #expect(filterItem(data: .null).value(at: .data(["s"])) == nil)
        #expect(filterItem(data: "text").value(at: .data(["s"])) == nil)
    }

    @Test func handBuiltContainsHoldsFoldedText() {
        let item = filterItem(data: ["s": "Hello"])
        #expect(ListFilter.term(FilterTerm(field: .data(["s"]), op: .containing("HELLO"))).matches(item))
        #expect(ListFilter.term(FilterTerm(field: .data(["s"]), op: .contains("hello"))).matches(item))
        #expect(!ListFilter.term(FilterTerm(field: .data(["s"]), op: .contains("HELLO"))).matches(item))
        // `data` itself, which the grammar cannot name.
        #expect(ListFilter.term(FilterTerm(field: .data([]), op: .exists(true))).matches(item))
        #expect(ListFilter.all([]).matches(item) && !ListFilter.any([]).matches(item))
    }
}

@Suite("Filter case folding")
struct FilterCaseFoldingTests {
    @Test(arguments: [
        ("HELLO World", "hello world"), ("STRASSE", "strasse"), ("Straße", "strasse"), ("ẞ", "ss"),
        ("ΣΊΣΥΦΟΣ", "σίσυφοσ"), ("σίσυφος", "σίσυφοσ"), ("ﬁ", "fi"), ("\u{212A}", "k"), ("\u{2126}", "ω"),
        ("µ", "μ"), ("ǅ", "ǆ"), ("ſ", "s"), ("İ", "i\u{307}"), ("ı", "ı"), ("I", "i"), ("\u{13A0}", "\u{13A0}"),
        ("\u{AB70}", "\u{13A0}"), ("\u{1F0}", "j\u{30C}"), ("\u{390}", "\u{3B9}\u{308}\u{301}"),
        ("\u{1FBE}", "\u{3B9}"),
        ("ᾼ", "αι"), ("ÀÉÎÕÜ", "àéîõü"), ("Ǆ", "ǆ"), ("Ⅻ", "ⅻ"), ("Ａ", "ａ"), ("𐐀", "𐐨"), ("日本語", "日本語"), ("😀", "😀"),
    ])
    func foldsAsCaseFoldingTxt(text: String, folded: String) {
        #expect(Array(CaseFolding.folded(text).unicodeScalars) == Array(folded.unicodeScalars))
    }

    /// The table of the Basic Multilingual Plane holds what the properties give, and folding twice changes
    /// nothing.
    @Test func theTableAgreesWithTheDerivationAndIsStable() {
        for value in UInt32(0x80)..<0x1_0000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            var table: [UInt8] = []
            CaseFolding.appendFolded(scalar, to: &table)
            var derived: [Unicode.Scalar] = []
            CaseFolding.fold(scalar) { derived.append($0) }
            #expect(
                Array(String(decoding: table, as: UTF8.self).unicodeScalars) == derived, "U+\(String(value, radix: 16))"
            )
            let once = String(decoding: table, as: UTF8.self)
            #expect(CaseFolding.folded(once) == once, "U+\(String(value, radix: 16))")
        }
    }

    @Test(arguments: [
        ("STRASSE", "straße", true), ("Straße", "STRASSE", true), ("GROẞE", "grosse", true),
        ("ΟΔΥΣΣΕΥΣ", "οδυσσευς", true),
        ("Οδυσσεύς", "ΣΕΎΣ", true), ("İstanbul", "i\u{307}stanbul", true), ("İstanbul", "istanbul", false),
        ("DIYARBAKIR", "dıyarbakır", false), ("Ǆemal", "ǆ", true), ("ﬁle", "FI", true), ("e\u{301}", "é", false),
        ("ǰ", "J\u{30C}", true), ("Ünïcödé text", "ÜNÏ", true), ("ascii only", "ONLY", true), ("ascii", "é", false),
        ("KELVIN \u{212A}", "kelvin k", true), ("ꭰꭱ", "ᎠᎡ", true),
    ])
    func containsIgnoresCase(text: String, needle: String, expected: Bool) throws {
        let item = filterItem(data: ["s": .string(text)])
        let term = JSONValue.object(["field": "data.s", "contains": .string(needle)])
        #expect(try ListFilter(json: term).matches(item) == expected)
    }
}

@Suite("Filter index keys")
struct FilterIndexKeyTests {
    private func keys(_ text: String) throws -> [FilterIndexKey]? {
        try filter(text).indexKeys
    }

    @Test func equalitiesGiveKeys() throws {
        let message = FilterIndexKey(field: .type, value: .string("message"))
        #expect(try keys(#"{"field":"type","eq":"message"}"#) == [message])
        #expect(
            try keys(#"{"field":"id","in":["b","a","b"]}"#)
                == [FilterIndexKey(field: .id, value: .string("a")), FilterIndexKey(field: .id, value: .string("b"))])
        #expect(
            try keys(
                #"{"all":[{"field":"data.x","gt":1},{"field":"type","eq":"message"},{"field":"data.n","in":[1,2]}]}"#)
                == [message])
        #expect(
            try keys(#"{"all":[{"field":"id","in":["a","b"]},{"field":"data.n","eq":1.0}]}"#)
                == [FilterIndexKey(field: .data(["n"]), value: .number(1))])
        #expect(try keys(#"{"not":{"field":"type","ne":"message"}}"#) == [message])
        #expect(
            try keys(
                #"{"any":[{"field":"type","eq":"a"},{"all":[{"field":"type","eq":"b"},{"field":"data.x","gt":1}]}]}"#)
                == [
                    FilterIndexKey(field: .type, value: .string("a")),
                    FilterIndexKey(field: .type, value: .string("b")),
                ])
        #expect(try keys(#"{"field":"data.z","eq":null}"#) == [FilterIndexKey(field: .data(["z"]), value: .null)])
    }

    @Test func otherFiltersGiveNone() throws {
        #expect(try keys(#"{"field":"type","ne":"message"}"#) == nil)
        #expect(try keys(#"{"not":{"field":"type","eq":"message"}}"#) == nil)
        #expect(try keys(#"{"field":"data.x","gt":1}"#) == nil)
        #expect(try keys(#"{"field":"data.x","exists":true}"#) == nil)
        #expect(try keys(#"{"any":[{"field":"type","eq":"a"},{"field":"data.x","gt":1}]}"#) == nil)
        #expect(try keys(#"{"not":{"all":[{"field":"type","eq":"a"},{"field":"id","eq":"b"}]}}"#) == nil)
    }
}

/// Random filters and items, from a list of choices that the property library shrinks: the matcher agrees with a
/// plain evaluator of the contract over ``JSONValue``, on the filter as written and on its canonical form.
@Suite("Filter properties")
struct FilterPropertyTests {
    @Test func matchingAgreesWithAPlainEvaluator() async {
        var tally = (matched: 0, unmatched: 0, keyed: 0, operators: Set<String>())
        await propertyCheck(count: 1_500, input: Gen.uint8(in: 0...255).array(of: 0...160)) { choices in
            var random = Choices(choices)
            let written = random.filter(levels: 0)
            guard let parsed = try? ListFilter(json: written) else {
                Issue.record("generated filter refused: \(written)")
                return
            }
            let reread = try? ListFilter(text: parsed.canonicalText)
            #expect(reread == parsed)
            #expect(reread?.canonicalText == parsed.canonicalText)
            let keys = parsed.indexKeys
            let matcher = FilterMatcher(parsed)
            for _ in 0..<6 {
                let (json, encoded) = random.item()
                let item = FilterItem(encoded: encoded)
                let expected = Reference.matches(written, json)
                let context = "\(written) on \(String(decoding: encoded, as: UTF8.self))"
                #expect(parsed.matches(item) == expected, "\(context)")
                #expect(matcher.matches(item) == expected, "prepared: \(context)")
                if expected, let keys {
                    #expect(keys.contains { item.value(at: $0.field) == $0.value }, "\(parsed.canonicalText): \(keys)")
                    tally.keyed += 1
                }
                if expected { tally.matched += 1 } else { tally.unmatched += 1 }
            }
            tally.operators.formUnion(Reference.operators(in: written))
        }
        // The generator must reach both answers, indexed filters and every operator, or the cases above prove little.
        #expect(tally.matched > 1_000 && tally.unmatched > 1_000 && tally.keyed > 100, "\(tally)")
        #expect(tally.operators.count == 12, "\(tally.operators.sorted())")
    }

    @Test func reorderingKeepsTheCanonicalForm() async {
        await propertyCheck(count: 500, input: Gen.uint8(in: 0...255).array(of: 0...120)) { choices in
            var random = Choices(choices)
            let written = random.filter(levels: 0)
            let shuffled = random.reordered(written)
            guard let first = try? ListFilter(json: written), let second = try? ListFilter(json: shuffled) else {
                Issue.record("generated filter refused: \(written)")
                return
            }
            #expect(first == second)
            #expect(first.hashValue == second.hashValue)
            #expect(first.canonicalText == second.canonicalText, "\(written) vs \(shuffled)")
        }
    }
}

/// Draws from a list of bytes, 0 once it runs out: a shorter list makes a smaller case.
private struct Choices {
    private let bytes: [UInt8]
    private var next = 0
    private var terms = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func below(_ bound: Int) -> Int {
        defer { next += 1 }
        return next < bytes.count ? Int(bytes[next]) % bound : 0
    }

    mutating func pick<Element>(_ elements: [Element]) -> Element { elements[below(elements.count)] }

    /// Strings whose folds the reference knows, with ones that fold alike (ß, ss, SS) and one with an escape.
    static let strings = ["a", "A", "b", "ß", "ss", "SS", "é", "É", "σ", "ς", "Σ", "ﬁ", "FI", "\"", "aB", "", "ab"]
    static let numbers: [JSONValue] = [0, 1, .double(1.0), .double(-0.0), .double(2.5), -3, .double(1e20), 7]
    static let fields = ["id", "type", "data.a", "data.b", "data.a.c", "data.s", "data.n"]

    mutating func string() -> String {
        (0..<below(3) + 1).map { _ in pick(Self.strings) }.joined()
    }

    mutating func scalar() -> JSONValue {
        switch below(5) {
        case 0: .string(string())
        case 1: pick(Self.numbers)
        case 2: .bool(below(2) == 0)
        case 3: .null
        default: .string(pick(Self.strings))
        }
    }

    mutating func filter(levels: Int) -> JSONValue {
        let kind = levels < ListFilter.maxLevels && terms < 24 ? below(7) : 0
        switch kind {
        case 4, 5:
            let members = (0..<below(3) + 1).map { _ in filter(levels: levels + 1) }
            return .object([kind == 4 ? "all" : "any": .array(members)])
        case 6:
            return .object(["not": filter(levels: levels + 1)])
        default:
            terms += 1
            return .object(["field": .string(pick(Self.fields)), operatorName(): operand()])
        }
    }

    private var lastOperator = ""

    private mutating func operatorName() -> String {
        lastOperator = pick(["eq", "ne", "in", "lt", "lte", "gt", "gte", "contains", "exists"])
        return lastOperator
    }

    private mutating func operand() -> JSONValue {
        switch lastOperator {
        case "in": return .array((0..<below(4) + 1).map { _ in scalar() })
        case "lt", "lte", "gt", "gte": return below(2) == 0 ? .string(string()) : pick(Self.numbers)
        case "contains":
            let text = string()
            return .string(text.isEmpty ? "a" : text)
        case "exists": return .bool(below(2) == 0)
        default: return scalar()
        }
    }

    mutating func value(depth: Int) -> JSONValue {
        switch depth < 2 ? below(8) : 0 {
        case 6:
            return .object(
                Dictionary(
                    (0..<below(3)).map { _ in (pick(["a", "b", "c", "s", "n"]), value(depth: depth + 1)) },
                    uniquingKeysWith: { a, _ in a }))
        case 7: return .array((0..<below(3)).map { _ in value(depth: depth + 1) })
        default: return scalar()
        }
    }

    /// An item as JSON and as the bytes a filter reads: canonical most of the time, otherwise spaced out with
    /// its members in another order.
    mutating func item() -> (JSONValue, [UInt8]) {
        let id = string(), type = string()
        var data: [String: JSONValue] = [:]
        for _ in 0..<below(5) { data[pick(["a", "b", "s", "n", "x"])] = value(depth: 1) }
        let dataValue: JSONValue = below(6) == 0 ? value(depth: 1) : .object(data)
        let json: JSONValue = ["id": .string(id), "type": .string(type), "data": dataValue]
        if below(3) > 0 {
            return (json, ItemDraft(id: id, type: type, data: JSONWriter.encode(dataValue), children: nil).encoded)
        }
        var text = #" { "data" : \#(dataValue) ,"#
        text += #""type": \#(JSONValue.string(type)), "id" :\#(JSONValue.string(id)) } "#
        return (json, Array(text.utf8))
    }

    /// `filter` with the members of every `all` and `any` and the values of every `in` shuffled, one value
    /// repeated.
    mutating func reordered(_ filter: JSONValue) -> JSONValue {
        guard case .object(let members) = filter, let (key, operand) = members.first(where: { $0.key != "field" })
        else {
            return filter
        }
        var copy = members
        switch (key, operand) {
        case ("all", .array(let filters)), ("any", .array(let filters)):
            copy[key] = .array(shuffled(filters.map { reordered($0) }))
        case ("not", let inner):
            copy[key] = reordered(inner)
        case ("in", .array(let values)):
            var values = shuffled(values)
            if values.count < 100 { values.append(pick(values)) }
            copy[key] = .array(values)
        default:
            break
        }
        return .object(copy)
    }

    private mutating func shuffled<Element>(_ elements: [Element]) -> [Element] {
        var elements = elements
        for index in elements.indices.reversed() where index > 0 {
            elements.swapAt(index, below(index + 1))
        }
        return elements
    }
}

/// The contract (openapi.yaml) read literally over ``JSONValue``: nothing shared with the code under test but the
/// parser that made the values.
private enum Reference {
    static func matches(_ filter: JSONValue, _ item: JSONValue) -> Bool {
        let members = filter.objectValue!
        if let filters = members["all"]?.arrayValue { return filters.allSatisfy { matches($0, item) } }
        if let filters = members["any"]?.arrayValue { return filters.contains { matches($0, item) } }
        if let inner = members["not"] { return !matches(inner, item) }
        let path = members["field"]!.stringValue!.split(separator: ".", omittingEmptySubsequences: false).map(
            String.init)
        let (op, operand) = members.first { $0.key != "field" }!
        var value: JSONValue? = item
        for key in path.first == "data" ? path : [path[0]] { value = value?[key] }
        guard let value else { return op == "ne" || (op == "exists" && operand == false) }
        switch op {
        case "exists": return operand == true
        case "eq": return equal(value, operand)
        case "ne": return !equal(value, operand)
        case "in": return operand.arrayValue!.contains { equal(value, $0) }
        case "lt": return order(value, operand).map { $0 < 0 } ?? false
        case "lte": return order(value, operand).map { $0 <= 0 } ?? false
        case "gt": return order(value, operand).map { $0 > 0 } ?? false
        case "gte": return order(value, operand).map { $0 >= 0 } ?? false
        case "contains":
            guard case .string(let text) = value else { return false }
            let (haystack, needle) = (Array(fold(text).utf8), Array(fold(operand.stringValue!).utf8))
            return needle.count <= haystack.count
                && (0...(haystack.count - needle.count)).contains {
                    haystack[$0..<($0 + needle.count)].elementsEqual(needle)
                }
        default: fatalError("unknown operator \(op)")
        }
    }

    /// The operators and combinators `filter` uses.
    static func operators(in filter: JSONValue) -> Set<String> {
        let members = filter.objectValue!
        var names = Set(members.keys.filter { $0 != "field" })
        for filters in [members["all"], members["any"]].compactMap({ $0?.arrayValue }) {
            for member in filters { names.formUnion(operators(in: member)) }
        }
        if let inner = members["not"] { names.formUnion(operators(in: inner)) }
        return names
    }

    private static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .int(let integer): Double(integer)
        case .double(let double): double
        default: nil
        }
    }

    private static func equal(_ value: JSONValue, _ operand: JSONValue) -> Bool {
        switch (value, operand) {
        case (.string(let a), .string(let b)): Array(a.utf8) == Array(b.utf8)
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: number(value).flatMap { a in number(operand).map { a == $0 } } ?? false
        }
    }

    private static func order(_ value: JSONValue, _ operand: JSONValue) -> Int? {
        if case .string(let a) = value, case .string(let b) = operand {
            return a.utf8.elementsEqual(b.utf8) ? 0 : (a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1)
        }
        guard let a = number(value), let b = number(operand) else { return nil }
        return a < b ? -1 : (a > b ? 1 : 0)
    }

    /// Unicode case folding of the generator's strings, spelled out.
    private static func fold(_ text: String) -> String {
        let table: [Character: String] = [
            "A": "a", "B": "b", "S": "s", "ß": "ss", "É": "é", "ς": "σ", "Σ": "σ", "ﬁ": "fi", "F": "f", "I": "i",
        ]
        return text.map { table[$0] ?? String($0) }.joined()
    }
}
