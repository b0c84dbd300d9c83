import Foundation
import QuireClient
import Testing

/// An item's JSON text.
func clientItem(_ id: String, _ text: String = "") -> String { #"{"id":"\#(id)","type":"t","data":"\#(text)"}"# }

@Suite("Client window")
struct ClientWindowTests {
    func item(_ id: String, _ text: String = "") -> String { clientItem(id, text) }

    func window() throws -> ClientWindow {
        try ClientWindow(
            pageSections: Data(
                #"""
                [{"id":"s0","header":null,"footer":null,"offset":0,"count":2,"items":[\#(item("a")),\#(item("b"))]},
                 {"id":"s1","header":{"type":"h","data":1},"footer":null,"offset":0,"count":1,"items":[\#(item("c"))]},
                 {"id":"s2","header":null,"footer":null,"offset":0,"count":0,"items":[]}]
                """#.utf8))
    }

    func batch(_ members: String) -> Data {
        var fields: [String: String] = [
            "deleteSections": "[]", "insertSections": "[]", "moveSections": "[]", "deleteItems": "[]",
            "insertItems": "[]", "moveItems": "[]", "updateItems": "[]", "updateSections": "[]",
        ]
        let given = try! ClientJSON(parsing: Data("{\(members)}".utf8))
        guard case .object(let object) = given else { return Data() }
        for key in object.keys { fields[key] = nil }
        let rest = fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
        return Data("{\(members)\(members.isEmpty ? "" : ",")\(rest)}".utf8)
    }

    @Test func appliesAValidBatch() throws {
        var client = try window()
        try client.apply(
            batch: batch(
                #""deleteItems":[[0,0]],"insertItems":[{"at":[1,0],"item":\#(item("x"))}],"moveItems":[{"from":[1,0],"to":[0,0]}],"counts":[2,1,0],"updateItems":[{"at":[0,1],"item":\#(item("b", "new"))}],"updateSections":[{"index":1,"header":null,"footer":null}]"#
            ))
        #expect(client.itemIDs == ["c", "b", "x"])
        #expect(client.sections[0].items[1]["data"] == .string("new"))
        #expect(client.sections[1].header == .null)
    }

    @Test func appliesSectionInsertsDeletesAndMoves() throws {
        var client = try window()
        try client.apply(
            batch: batch(
                #""deleteSections":[2],"insertSections":[{"index":0,"section":{"id":"n","header":null,"footer":null,"offset":0,"count":1,"items":[\#(item("y"))]}}],"moveSections":[{"from":0,"to":2}],"counts":[1,1,2]"#
            ))
        #expect(client.sections.map(\.id) == ["n", "s1", "s0"])
    }

    @Test(arguments: [
        #""counts":[2,1]"#,
        #""counts":[1,1,0]"#,
        #""deleteItems":[[0,0],[0,0]],"counts":[0,1,0]"#,
        #""deleteItems":[[0,5]],"counts":[1,1,0]"#,
        #""deleteSections":[1],"moveItems":[{"from":[1,0],"to":[0,0]}],"counts":[3,0]"#,
        #""moveSections":[{"from":0,"to":1}],"deleteItems":[[0,0]],"counts":[1,1,0]"#,
        #""insertSections":[{"index":0,"section":{"id":"n","header":null,"footer":null,"offset":0,"count":0,"items":[]}}],"insertItems":[{"at":[0,0],"item":\#(clientItem("x"))}],"counts":[1,2,1,0]"#,
        #""updateItems":[{"at":[0,0],"item":\#(clientItem("zz"))}],"counts":[2,1,0]"#,
        #""insertItems":[{"at":[0,1],"item":\#(clientItem("x"))},{"at":[0,1],"item":\#(clientItem("y"))}],"counts":[4,1,0]"#,
    ])
    func rejectsBrokenRules(members: String) throws {
        var client = try window()
        let before = client
        #expect(throws: ChangeError.self) { try client.apply(batch: batch(members)) }
        #expect(client == before)
    }

    @Test func appliesSequentialOpsOneAtATime() throws {
        var client = try window()
        try client.apply(
            sequential: Data(
                #"""
                [{"op":"deleteItem","at":[0,0],"id":"a"},{"op":"moveItem","from":[1,0],"to":[0,0],"id":"c"},
                 {"op":"insertSection","index":3,"section":{"id":"n","header":null,"footer":null,"offset":0,"count":0,"items":[]}},
                 {"op":"moveSection","from":3,"to":0,"id":"n"},{"op":"insertItem","at":[0,0],"item":\#(item("x"))},
                 {"op":"updateItem","at":[1,1],"item":\#(item("b", "v"))},
                 {"op":"updateSection","index":2,"id":"s1","header":null,"footer":{"type":"f","data":null}},
                 {"op":"deleteSection","index":3,"id":"s2"}]
                """#.utf8))
        #expect(client.sections.map(\.id) == ["n", "s0", "s1"])
        #expect(client.itemIDs == ["x", "c", "b"])
        #expect(client.sections[2].footer["type"] == .string("f"))
    }

    @Test func rejectsSequentialOpsThatDoNotFit() throws {
        var client = try window()
        let before = client
        #expect(throws: ChangeError.self) {
            try client.apply(
                sequential: Data(
                    #"[{"op":"deleteItem","at":[0,0],"id":"a"},{"op":"deleteItem","at":[0,0],"id":"a"}]"#.utf8))
        }
        #expect(throws: ChangeError.self) {
            try client.apply(sequential: Data(#"[{"op":"moveItem","from":[0,0],"to":[5,0],"id":"a"}]"#.utf8))
        }
        #expect(throws: ChangeError.self) { try client.apply(sequential: Data(#"[{"op":"explode"}]"#.utf8)) }
        #expect(throws: ChangeError.self) { try client.apply(sequential: Data(#"[{"op":"#.utf8)) }
        #expect(client == before)
    }
}
