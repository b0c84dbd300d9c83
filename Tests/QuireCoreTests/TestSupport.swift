import Foundation
import QuireClient
import QuireCore

/// A plain model of a list document, edited by the tests and turned into JSON for the core.
struct TestItem: Equatable {
    var id: String
    var type = "cell"
    var data: JSONValue = .null
    var children: [TestItem] = []

    var json: JSONValue {
        var members: [String: JSONValue] = ["id": .string(id), "type": .string(type), "data": data]
        if !children.isEmpty { members["children"] = .array(children.map(\.json)) }
        return .object(members)
    }
}

struct TestSection: Equatable {
    var id: String
    var header: JSONValue = .null
    var items: [TestItem] = []

    var json: JSONValue {
        .object(["id": .string(id), "header": header, "footer": .null, "items": .array(items.map(\.json))])
    }
}

struct TestList {
    var sections: [TestSection] = []

    var json: JSONValue { .object(["sections": .array(sections.map(\.json))]) }

    func version(limits: ListLimits = ListLimits()) throws -> ListVersion {
        try ListVersion(document: json, limits: limits)
    }

    /// Ids of every item with children (candidates for the expanded set).
    var parentIDs: [String] {
        var ids: [String] = []
        func walk(_ items: [TestItem]) {
            for item in items where !item.children.isEmpty {
                ids.append(item.id)
                walk(item.children)
            }
        }
        for section in sections { walk(section.items) }
        return ids
    }
}

extension Window {
    /// The page's `sections` array as bytes.
    var sectionsJSON: Data {
        var bytes: [UInt8] = []
        encodeSections(into: &bytes)
        return Data(bytes)
    }

    /// What a client holding this window shows.
    func clientWindow() throws -> ClientWindow {
        try ClientWindow(pageSections: sectionsJSON)
    }
}

extension WindowChanges {
    var batchJSON: Data {
        var bytes: [UInt8] = []
        encodeBatch(into: &bytes)
        return Data(bytes)
    }

    var sequentialJSON: Data {
        var bytes: [UInt8] = []
        encodeSequential(into: &bytes)
        return Data(bytes)
    }
}

/// Length of a longest strictly increasing subsequence, the slow and obvious way (the tests' oracle).
func naiveLongestIncreasingLength(_ values: [Int]) -> Int {
    guard !values.isEmpty else { return 0 }
    var lengths = [Int](repeating: 1, count: values.count)
    for index in values.indices {
        for earlier in 0..<index where values[earlier] < values[index] {
            lengths[index] = max(lengths[index], lengths[earlier] + 1)
        }
    }
    return lengths.max()!
}

/// A short picture of a version: `s1[a b(c d)] s2[]`, children in parentheses.
func outline(_ version: ListVersion) throws -> String {
    let document = try JSONParser().parse(version.documentBytes)
    func items(_ json: JSONValue?) -> String {
        (json?.arrayValue ?? []).map { item in
            let id = item["id"]!.stringValue!
            guard let children = item["children"], !(children.arrayValue ?? []).isEmpty else { return id }
            return "\(id)(\(items(children)))"
        }.joined(separator: " ")
    }
    return (document["sections"]?.arrayValue ?? []).map { section in
        "\(section["id"]!.stringValue!)[\(items(section["items"]))]"
    }.joined(separator: " ")
}

/// A version from a compact spec: sections with item ids; `"p>c1,c2"` makes `p` with children `c1`, `c2`.
func makeVersion(_ spec: [(String, [String])], limits: ListLimits = ListLimits()) throws -> ListVersion {
    var list = TestList()
    for (id, items) in spec {
        list.sections.append(
            TestSection(
                id: id,
                items: items.map { entry in
                    let parts = entry.split(separator: ">")
                    var item = TestItem(id: String(parts[0]))
                    if parts.count > 1 {
                        item.children = parts[1].split(separator: ",").map { TestItem(id: String($0)) }
                    }
                    return item
                }))
    }
    return try list.version(limits: limits)
}

/// Applies ops written as JSON text.
func applying(_ version: ListVersion, _ opsJSON: String) throws -> ListVersion {
    try version.applying(opsDocument: JSONParser().parse("{\"ops\":[\(opsJSON)]}"))
}
