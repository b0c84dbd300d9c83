import Glibc
import QuireCore

/// The four figures of the core: diff and encode on a flat and a sectioned list, one write, and the
/// memory of many versions kept alive.
struct DiffBenchmarks {
    /// Prints every figure, or only those named in `only`.
    func run(only: Set<String>) {
        let figures: [(String, () -> Figure)] = [
            ("flat-100k", flat), ("sectioned-100x1000", sectioned), ("version-after-1-op", versionAfterOneOp),
            ("versions-1000-memory", versionsMemory),
        ]
        for (name, figure) in figures where only.isEmpty || only.contains(name) {
            print(figure().line)
        }
    }

    /// A document of `sections` sections of `items` items each, ids `s<k>` and `i<k>`.
    static func document(sections: Int, items: Int) -> JSONValue {
        .object([
            "sections": .array(
                (0..<sections).map { section in
                    .object([
                        "id": .string("s\(section)"),
                        "header": .object(["type": "header", "data": .object(["title": .string("Section \(section)")])]
                        ),
                        "items": .array(
                            (0..<items).map { item in
                                let number = section * items + item
                                return .object([
                                    "id": .string("i\(number)"), "type": "message",
                                    "data": .object([
                                        "text": .string("Message number \(number)"), "n": .int(Int64(number)),
                                    ]),
                                ])
                            }),
                    ])
                })
        ])
    }

    static func item(_ id: String, _ text: String) -> JSONValue {
        .object(["id": .string(id), "type": "message", "data": .object(["text": .string(text)])])
    }

    /// Ops: `each` deletes, inserts, moves and content updates of random items (moves and inserts land after
    /// random items, so across sections too).
    static func itemOps(ids: [String], each: Int, random: inout SeededGenerator) -> [JSONValue] {
        var pool = ids.shuffled(using: &random)
        let deleted = Array(pool.suffix(each))
        pool.removeLast(each)
        var ops: [JSONValue] = [.object(["op": "removeItems", "ids": .array(deleted.map { .string($0) })])]
        for index in 0..<each {
            let anchor = pool[Int.random(in: 0..<pool.count, using: &random)]
            ops.append(.object(["op": "insertItems", "after": .string(anchor), "items": [item("new\(index)", "new")]]))
        }
        let moved = pool.prefix(each)
        for id in moved {
            var anchor = id
            while anchor == id { anchor = pool[Int.random(in: 0..<pool.count, using: &random)] }
            ops.append(.object(["op": "moveItem", "id": .string(id), "after": .string(anchor)]))
        }
        let updated = pool.dropFirst(each).prefix(each)
        ops.append(.object(["op": "updateItems", "items": .array(updated.map { item($0, "changed") })]))
        return ops
    }

    func measureDiff(_ name: String, old: ListVersion, new: ListVersion) -> Figure {
        let oldWindow = old.window(range: 0..<old.visibleCount())
        let newWindow = new.window(range: 0..<new.visibleCount())
        var samples: [Double] = []
        var bytes: [UInt8] = []
        if getenv("QUIRE_BENCH_DETAIL") != nil {
            // The three parts of one figure, to see which of them a change moves.
            var changes = oldWindow.changes(to: newWindow)
            for _ in 0..<5 {
                let diff = milliseconds { changes = oldWindow.changes(to: newWindow) }
                let batch = milliseconds {
                    bytes.removeAll(keepingCapacity: true)
                    changes.encodeBatch(into: &bytes)
                }
                let sequential = milliseconds {
                    bytes.removeAll(keepingCapacity: true)
                    changes.encodeSequential(into: &bytes)
                }
                print("  \(name) parts: diff \(diff) ms, batch \(batch) ms, sequential \(sequential) ms")
            }
        }
        let rounds = getenv("QUIRE_BENCH_ROUNDS").map { Int(atoi($0)) } ?? 41
        for _ in 0..<rounds {
            samples.append(
                milliseconds {
                    let changes = oldWindow.changes(to: newWindow)
                    bytes.removeAll(keepingCapacity: true)
                    changes.encodeBatch(into: &bytes)
                    changes.encodeSequential(into: &bytes)
                })
        }
        return Figure(name: name, unit: "ms", samples: samples)
    }

    func flat() -> Figure {
        var random = SeededGenerator(seed: 1)
        let old = try! ListVersion(document: Self.document(sections: 1, items: 100_000))
        let ops = Self.itemOps(ids: (0..<100_000).map { "i\($0)" }, each: 2_000, random: &random)
        let new = try! old.applying(opsDocument: .object(["ops": .array(ops)]))
        return measureDiff("flat-100k", old: old, new: new)
    }

    func sectioned() -> Figure {
        var random = SeededGenerator(seed: 2)
        let old = try! ListVersion(document: Self.document(sections: 100, items: 1_000))
        var ops = Self.itemOps(ids: (0..<100_000).map { "i\($0)" }, each: 2_000, random: &random)
        var sectionIDs = (0..<100).map { "s\($0)" }.shuffled(using: &random)
        ops.append(.object(["op": "removeSections", "ids": .array(sectionIDs.suffix(2).map { .string($0) })]))
        sectionIDs.removeLast(2)
        for index in 0..<2 {
            ops.append(
                .object([
                    "op": "moveSection", "id": .string(sectionIDs[index]), "after": .string(sectionIDs[index + 2]),
                ]))
            ops.append(
                .object([
                    "op": "insertSections", "before": .string(sectionIDs[index + 10]),
                    "sections": [.object(["id": .string("new-s\(index)"), "items": [Self.item("ns\(index)", "x")]])],
                ]))
        }
        let new = try! old.applying(opsDocument: .object(["ops": .array(ops)]))
        return measureDiff("sectioned-100x1000", old: old, new: new)
    }

    func versionAfterOneOp() -> Figure {
        var random = SeededGenerator(seed: 3)
        var version = try! ListVersion(document: Self.document(sections: 1, items: 100_000))
        var samples: [Double] = []
        for round in 0..<1_000 {
            let id = "i\(Int.random(in: 0..<100_000, using: &random))"
            let op: JSONValue =
                round % 2 == 0
                ? .object(["op": "updateItems", "items": [Self.item(id, "round \(round)")]])
                : .object(["op": "moveItem", "id": .string(id), "section": "s0"])
            samples.append(
                milliseconds {
                    version = try! version.applying(opsDocument: .object(["ops": [op]]))
                })
        }
        return Figure(name: "version-after-1-op", unit: "ms", samples: samples)
    }

    /// Bytes held by 1,000 versions beyond the first, each one item different from the last, all alive:
    /// every distinct node and buffer counted once (``ListVersion/estimatedFootprint(of:)``).
    func versionsMemory() -> Figure {
        var samples: [Double] = []
        for run in 0..<3 {
            var random = SeededGenerator(seed: 4 + UInt64(run))
            let first = try! ListVersion(document: Self.document(sections: 1, items: 100_000))
            var versions = [first]
            versions.reserveCapacity(1_001)
            for round in 0..<1_000 {
                let id = "i\(Int.random(in: 0..<100_000, using: &random))"
                let op: JSONValue = .object(["op": "updateItems", "items": [Self.item(id, "round \(round)")]])
                versions.append(try! versions[versions.count - 1].applying(opsDocument: .object(["ops": [op]])))
            }
            let all = ListVersion.estimatedFootprint(of: versions)
            let base = ListVersion.estimatedFootprint(of: [first])
            samples.append(Double(all - base) / 1_048_576)
        }
        return Figure(name: "versions-1000-memory", unit: "MB", samples: samples)
    }
}
