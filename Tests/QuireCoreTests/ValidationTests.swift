import QuireCore
import Testing

@Suite("Validation")
struct ValidationTests {
    func error(_ json: String, limits: ListLimits = ListLimits()) -> ListValidationError? {
        do {
            _ = try ListVersion(document: JSONParser().parse(json), limits: limits)
            return nil
        } catch let error as ListValidationError {
            return error
        } catch {
            return nil
        }
    }

    @Test(arguments: [
        (
            #"{"sections":[{"id":"a","items":[]},{"id":"a","items":[]}]}"#, "sections[1].id",
            ListValidationError.Kind.duplicateID
        ),
        (
            #"{"sections":[{"id":"a","items":[{"id":"x","type":"t"},{"id":"x","type":"t"}]}]}"#,
            "sections[0].items[1].id", .duplicateID
        ),
        (
            #"{"sections":[{"id":"a","items":[{"id":"x","type":"t","children":[{"id":"y","type":"t"}]}]},{"id":"b","items":[{"id":"y","type":"t"}]}]}"#,
            "sections[1].items[0].id", .duplicateID
        ),
        (
            #"{"sections":[{"id":"a","items":[{"id":"x","type":"t","children":[{"id":"y","type":"t"},{"id":"x","type":"t"}]}]}]}"#,
            "sections[0].items[0].children[1].id", .duplicateID
        ),
        (#"{"sections":[{"id":"a","items":[{"type":"t"}]}]}"#, "sections[0].items[0].id", .missingField),
        (#"{"sections":[{"id":"a","items":[{"id":"x"}]}]}"#, "sections[0].items[0].type", .missingField),
        (#"{"sections":[{"id":"a","items":[{"id":"","type":"t"}]}]}"#, "sections[0].items[0].id", .emptyValue),
        (#"{"sections":[{"id":"a","items":[{"id":7,"type":"t"}]}]}"#, "sections[0].items[0].id", .wrongType),
        (#"{"sections":[{"items":[]}]}"#, "sections[0].id", .missingField),
        (#"{"sections":[{"id":"a","header":{"data":1},"items":[]}]}"#, "sections[0].header.type", .missingField),
        (#"{"sections":[{"id":"a","items":{}}]}"#, "sections[0].items", .wrongType),
        (#"{"sections":{}}"#, "sections", .wrongType),
        (#"{}"#, "sections", .missingField),
        (#"[]"#, "", .wrongType),
    ])
    func namesThePathOfTheProblem(json: String, path: String, kind: ListValidationError.Kind) {
        let error = error(json)
        #expect(error?.path == path, "\(json): \(String(describing: error))")
        #expect(error?.kind == kind)
    }

    @Test func enforcesTheLimits() {
        let limits = ListLimits(
            maxItems: 3, maxSections: 2, maxIDLength: 4, maxTypeLength: 3, maxDataBytes: 10, maxDepth: 1)
        let cases: [(String, String, ListValidationError.Kind)] = [
            (#"{"sections":[{"id":"a","items":[{"id":"toolong","type":"t"}]}]}"#, "sections[0].items[0].id", .tooLong),
            (#"{"sections":[{"id":"a","items":[{"id":"x","type":"long"}]}]}"#, "sections[0].items[0].type", .tooLong),
            (
                #"{"sections":[{"id":"a","items":[{"id":"x","type":"t","data":"0123456789"}]}]}"#,
                "sections[0].items[0].data", .tooLarge
            ),
            (
                #"{"sections":[{"id":"a","items":[]},{"id":"b","items":[]},{"id":"c","items":[]}]}"#, "sections",
                .tooMany
            ),
            (
                #"{"sections":[{"id":"a","items":[{"id":"1","type":"t"},{"id":"2","type":"t"},{"id":"3","type":"t"},{"id":"4","type":"t"}]}]}"#,
                "sections[0].items", .tooMany
            ),
            (
                #"{"sections":[{"id":"a","items":[{"id":"x","type":"t","children":[{"id":"y","type":"t","children":[{"id":"z","type":"t"}]}]}]}]}"#,
                "sections[0].items[0].children[0].children", .tooDeep
            ),
        ]
        for (json, path, kind) in cases {
            let error = error(json, limits: limits)
            #expect(error?.path == path, "\(json): \(String(describing: error))")
            #expect(error?.kind == kind, "\(json)")
        }
    }

    @Test func opErrorsNameTheOpIndexAndPath() throws {
        let version = try makeVersion([("s", ["a", "b"])])
        let cases: [(String, Int, String)] = [
            (#"{"op":"removeItems","ids":["a"]},{"op":"removeItems","ids":["a"]}"#, 1, "ids[0]"),
            (
                #"{"op":"insertItems","section":"s","items":[{"id":"c","type":"t"},{"id":"a","type":"t"}]}"#, 0,
                "items[1].id"
            ),
            (#"{"op":"insertItems","section":"nope","items":[]}"#, 0, "section"),
            (#"{"op":"insertItems","section":"s","after":"zz","items":[{"id":"c","type":"t"}]}"#, 0, "after"),
            (#"{"op":"moveItem","id":"a","after":"a"}"#, 0, "after"),
            (#"{"op":"moveItem","id":"a","parent":"a"}"#, 0, "parent"),
            (#"{"op":"frobnicate"}"#, 0, "op"),
            (#"{"op":"updateItems","items":[{"id":"zz","type":"t"}]}"#, 0, "items[0].id"),
            (
                #"{"op":"insertSections","sections":[{"id":"t","items":[{"id":"b","type":"t"}]}]}"#, 0,
                "sections[0].items[0].id"
            ),
            (#"{"op":"moveSection","id":"s","before":"nope"}"#, 0, "before"),
            (#"{"op":"insertItems","items":[{"id":"c","type":"t"}]}"#, 0, "section"),
        ]
        for (ops, index, path) in cases {
            do {
                _ = try applying(version, ops)
                Issue.record("accepted \(ops)")
            } catch let error as OpError {
                #expect(error.opIndex == index, "\(ops): \(error)")
                #expect(error.path == path, "\(ops): \(error)")
            }
        }
    }
}
