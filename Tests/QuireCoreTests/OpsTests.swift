import QuireCore
import Testing

@Suite("Ops semantics")
struct OpsTests {
    let base: ListVersion

    init() throws {
        base = try makeVersion([("s1", ["a", "b", "p>c1,c2"]), ("s2", ["d"]), ("s3", [])])
    }

    func after(_ ops: String) throws -> String {
        try outline(applying(base, ops))
    }

    func item(_ id: String) -> String { #"{"id":"\#(id)","type":"t"}"# }

    @Test func insertItemsAtEveryAnchor() throws {
        #expect(
            try after(#"{"op":"insertItems","section":"s1","items":[\#(item("x")),\#(item("y"))]}"#)
                == "s1[a b p(c1 c2) x y] s2[d] s3[]")
        #expect(
            try after(#"{"op":"insertItems","section":"s1","after":"a","items":[\#(item("x"))]}"#)
                == "s1[a x b p(c1 c2)] s2[d] s3[]")
        #expect(
            try after(#"{"op":"insertItems","section":"s1","before":"a","items":[\#(item("x"))]}"#)
                == "s1[x a b p(c1 c2)] s2[d] s3[]")
        #expect(
            try after(#"{"op":"insertItems","after":"d","items":[\#(item("x"))]}"#) == "s1[a b p(c1 c2)] s2[d x] s3[]")
        #expect(
            try after(#"{"op":"insertItems","section":"s3","items":[\#(item("x"))]}"#) == "s1[a b p(c1 c2)] s2[d] s3[x]"
        )
        #expect(
            try after(#"{"op":"insertItems","parent":"p","items":[\#(item("x"))]}"#) == "s1[a b p(c1 c2 x)] s2[d] s3[]")
        #expect(
            try after(#"{"op":"insertItems","parent":"p","before":"c2","items":[\#(item("x"))]}"#)
                == "s1[a b p(c1 x c2)] s2[d] s3[]")
        #expect(
            try after(#"{"op":"insertItems","before":"c1","items":[\#(item("x"))]}"#) == "s1[a b p(x c1 c2)] s2[d] s3[]"
        )
        #expect(
            try after(#"{"op":"insertItems","parent":"a","items":[\#(item("x"))]}"#) == "s1[a(x) b p(c1 c2)] s2[d] s3[]"
        )
    }

    @Test func removeAndUpdateItems() throws {
        #expect(try after(#"{"op":"removeItems","ids":["p","d"]}"#) == "s1[a b] s2[] s3[]")
        #expect(try after(#"{"op":"removeItems","ids":["c1"]}"#) == "s1[a b p(c2)] s2[d] s3[]")
        let updated = try applying(base, #"{"op":"updateItems","items":[{"id":"b","type":"u","data":{"k":1}}]}"#)
        #expect(try outline(updated) == "s1[a b p(c1 c2)] s2[d] s3[]")
        let b = updated.firstPage(limit: 10).sections[0].items[1]
        var bytes: [UInt8] = []
        b.write(into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"id":"b","type":"u","data":{"k":1}}"#)
        #expect(
            try after(
                #"{"op":"updateItems","items":[{"id":"p","type":"t","children":[\#(item("c2")),\#(item("z"))]}]}"#)
                == "s1[a b p(c2 z)] s2[d] s3[]")
        // Removed ids can be used again.
        #expect(
            try after(#"{"op":"removeItems","ids":["a"]},{"op":"insertItems","section":"s3","items":[\#(item("a"))]}"#)
                == "s1[b p(c1 c2)] s2[d] s3[a]")
    }

    @Test func moveItemToEveryKindOfPlace() throws {
        #expect(try after(#"{"op":"moveItem","id":"a","after":"b"}"#) == "s1[b a p(c1 c2)] s2[d] s3[]")
        #expect(try after(#"{"op":"moveItem","id":"a"}"#) == "s1[b p(c1 c2) a] s2[d] s3[]")
        #expect(try after(#"{"op":"moveItem","id":"p","section":"s2","before":"d"}"#) == "s1[a b] s2[p(c1 c2) d] s3[]")
        #expect(try after(#"{"op":"moveItem","id":"a","section":"s3"}"#) == "s1[b p(c1 c2)] s2[d] s3[a]")
        #expect(try after(#"{"op":"moveItem","id":"a","after":"d"}"#) == "s1[b p(c1 c2)] s2[d a] s3[]")
        #expect(try after(#"{"op":"moveItem","id":"c2","section":"s1","before":"a"}"#) == "s1[c2 a b p(c1)] s2[d] s3[]")
        #expect(try after(#"{"op":"moveItem","id":"d","parent":"p","after":"c1"}"#) == "s1[a b p(c1 d c2)] s2[] s3[]")
        #expect(try after(#"{"op":"moveItem","id":"c1","before":"c2"}"#) == "s1[a b p(c1 c2)] s2[d] s3[]")
    }

    @Test func sectionOps() throws {
        #expect(
            try after(#"{"op":"insertSections","sections":[{"id":"n","items":[\#(item("x"))]}]}"#)
                == "s1[a b p(c1 c2)] s2[d] s3[] n[x]")
        #expect(
            try after(#"{"op":"insertSections","before":"s1","sections":[{"id":"n","items":[]}]}"#)
                == "n[] s1[a b p(c1 c2)] s2[d] s3[]")
        #expect(
            try after(#"{"op":"insertSections","after":"s1","sections":[{"id":"n","items":[]},{"id":"m","items":[]}]}"#)
                == "s1[a b p(c1 c2)] n[] m[] s2[d] s3[]")
        #expect(try after(#"{"op":"removeSections","ids":["s1"]}"#) == "s2[d] s3[]")
        #expect(try after(#"{"op":"moveSection","id":"s1"}"#) == "s2[d] s3[] s1[a b p(c1 c2)]")
        #expect(try after(#"{"op":"moveSection","id":"s3","before":"s1"}"#) == "s3[] s1[a b p(c1 c2)] s2[d]")
        #expect(try after(#"{"op":"moveSection","id":"s1","after":"s2"}"#) == "s2[d] s1[a b p(c1 c2)] s3[]")
        // Items of a removed section are gone from the index too.
        #expect(
            try after(
                #"{"op":"removeSections","ids":["s1"]},{"op":"insertItems","section":"s3","items":[\#(item("a"))]}"#)
                == "s2[d] s3[a]")
    }

    @Test func updateSectionChangesOnlyWhatItNames() throws {
        let withHeader = try applying(base, #"{"op":"updateSection","id":"s2","header":{"type":"h","data":"x"}}"#)
        let page = withHeader.firstPage(limit: 100)
        var bytes: [UInt8] = []
        page.sections[1].write(into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""header":{"type":"h","data":"x"},"footer":null"#))
        let footerOnly = try applying(withHeader, #"{"op":"updateSection","id":"s2","footer":{"type":"f"}}"#)
        bytes = []
        footerOnly.firstPage(limit: 100).sections[1].write(into: &bytes)
        #expect(
            String(decoding: bytes, as: UTF8.self).contains(
                #""header":{"type":"h","data":"x"},"footer":{"type":"f","data":null}"#))
        let cleared = try applying(footerOnly, #"{"op":"updateSection","id":"s2","header":null}"#)
        bytes = []
        cleared.firstPage(limit: 100).sections[1].write(into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""header":null,"footer":{"type":"f","data":null}"#))
    }

    @Test func aBatchAppliesWholeOrNotAtAll() throws {
        #expect(throws: OpError.self) {
            try applying(base, #"{"op":"removeItems","ids":["a"]},{"op":"removeItems","ids":["nope"]}"#)
        }
        #expect(try outline(base) == "s1[a b p(c1 c2)] s2[d] s3[]")
        #expect(base.version == 1)
        let next = try applying(base, #"{"op":"removeItems","ids":["a"]}"#)
        #expect(next.version == 2)
        #expect(try outline(base) == "s1[a b p(c1 c2)] s2[d] s3[]")
        #expect(next.itemCount == base.itemCount - 1)
    }

    /// Many random ops keep the version consistent (the debug invariants check every step) and agree with
    /// a document built the plain way.
    @Test func randomOpsMatchAPlainModel() throws {
        var random = SeededGenerator(seed: 99)
        var version = try makeVersion([("s0", []), ("s1", [])])
        var model: [(String, [String])] = [("s0", []), ("s1", [])]
        for step in 0..<600 {
            let section = Int.random(in: 0..<model.count, using: &random)
            let items = model[section].1
            if items.isEmpty || Int.random(in: 0..<3, using: &random) == 0 {
                let position = Int.random(in: 0...items.count, using: &random)
                let anchor = position < items.count ? #","before":"\#(items[position])""# : ""
                version = try applying(
                    version,
                    #"{"op":"insertItems","section":"\#(model[section].0)"\#(anchor),"items":[\#(item("i\(step)"))]}"#)
                model[section].1.insert("i\(step)", at: position)
            } else if Bool.random(using: &random) {
                let index = Int.random(in: 0..<items.count, using: &random)
                version = try applying(version, #"{"op":"removeItems","ids":["\#(items[index])"]}"#)
                model[section].1.remove(at: index)
            } else {
                let index = Int.random(in: 0..<items.count, using: &random)
                let id = model[section].1.remove(at: index)
                let target = Int.random(in: 0..<model.count, using: &random)
                let position = Int.random(in: 0...model[target].1.count, using: &random)
                let anchor =
                    position > 0
                    ? #","after":"\#(model[target].1[position - 1])""# : #","section":"\#(model[target].0)""#
                let op =
                    position > 0
                    ? #"{"op":"moveItem","id":"\#(id)"\#(anchor)}"#
                    : #"{"op":"moveItem","id":"\#(id)"\#(anchor),"before":"\#(model[target].1.first ?? "")"}"#
                if position == 0 && model[target].1.isEmpty {
                    version = try applying(version, #"{"op":"moveItem","id":"\#(id)","section":"\#(model[target].0)"}"#)
                } else {
                    version = try applying(version, op)
                }
                model[target].1.insert(id, at: position)
            }
        }
        #expect(try outline(version) == model.map { "\($0.0)[\($0.1.joined(separator: " "))]" }.joined(separator: " "))
        for (section, items) in model {
            for (index, id) in items.enumerated() {
                let offset = model.prefix { $0.0 != section }.reduce(0) { $0 + $1.1.count }
                #expect(version.visiblePosition(of: id) == offset + index)
            }
        }
    }
}

@Suite("Documents")
struct DocumentTests {
    /// A version written as a document and read back is the same list, under the stored version number.
    @Test func roundTripsThroughItsDocument() throws {
        var generator = RandomLists(seed: 5)
        for _ in 0..<50 {
            let version = try generator.list().version()
            let reloaded = try ListVersion(document: JSONParser().parse(version.documentBytes), version: 42)
            #expect(reloaded.version == 42)
            #expect(reloaded.documentBytes == version.documentBytes)
            #expect(reloaded.itemCount == version.itemCount && reloaded.sectionIDs == version.sectionIDs)
        }
    }
}
