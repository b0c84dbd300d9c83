import Foundation
import QuireCore
import QuireStore

/// The store's figures, durable (a WAL file with `synchronous = FULL`, every write `fsync`ed), through the
/// registry's write path as the server runs it (build the next version, commit it, publish it):
///
/// - `ops-batch-10-on-10k`: a batch of 10 ops (inserts, updates, moves, removes) on a 10,000-item list;
/// - `put-10k-1pct`: a `PUT` of a 10,000-item list that changes 1% of it (parse, replace, commit);
/// - `startup-1m`: opening a file of 1,000,000 stored items and loading every list, as `quire serve` does
///   before `/readyz` answers 200.
///
/// The files go in `QUIRE_BENCH_DIR` (the system's temporary folder by default) and are removed after.
struct StoreBenchmarks {
    let folder: URL = {
        let base = ProcessInfo.processInfo.environment["QUIRE_BENCH_DIR"].map { URL(fileURLWithPath: $0) }
        return (base ?? FileManager.default.temporaryDirectory).appendingPathComponent("quire-bench-\(UUID())")
    }()

    func run(only: Set<String>) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        print("store benchmarks in \(folder.path) (WAL, synchronous=FULL)")
        let figures: [(String, () throws -> String)] = [
            ("ops-batch-10-on-10k", opsBatch), ("put-10k-1pct", putOnePercent), ("startup-1m", startup),
        ]
        for (name, figure) in figures where only.isEmpty || only.contains(name) {
            print(try figure())
        }
    }

    /// `NAME: p50 X ms, p99 Y ms (n samples, min, max)`.
    static func percentiles(_ name: String, _ samples: [Double]) -> String {
        let sorted = samples.sorted()
        func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
        let p50 = sorted[sorted.count / 2]
        let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        return
            "\(name): p50 \(rounded(p50)) ms, p99 \(rounded(p99)) ms (\(sorted.count) samples, min \(rounded(sorted[0])), max \(rounded(sorted[sorted.count - 1])))"
    }

    static func itemText(_ id: Int, tag: String = "") -> String {
        #"{"id":"i\#(id)","type":"message","data":{"text":"Message number \#(id)\#(tag)","n":\#(id)}}"#
    }

    /// `sections` sections of `perSection` items, as document text.
    static func documentText(sections: Int, perSection: Int, change: (Int) -> String? = { _ in nil }) -> String {
        var text = #"{"sections":["#
        for section in 0..<sections {
            if section > 0 { text += "," }
            text += #"{"id":"s\#(section)","header":{"type":"day","data":{"title":"Day \#(section)"}},"items":["#
            var first = true
            for index in 0..<perSection {
                let id = section * perSection + index
                guard let item = change(id) ?? Optional(itemText(id)), !item.isEmpty else { continue }
                if !first { text += "," }
                first = false
                text += item
            }
            text += "]}"
        }
        return text + "]}"
    }

    func registry(_ name: String) throws -> (ListRegistry, SQLiteListStore) {
        let store = try SQLiteListStore(path: folder.appendingPathComponent("\(name).sqlite").path)
        return (ListRegistry(store: store, limits: ListLimits()), store)
    }

    func opsBatch() throws -> String {
        let (registry, _) = try registry("ops")
        let document = try JSONParser().parse(Self.documentText(sections: 10, perSection: 1000))
        _ = try registry.write("list") { _ throws(ListRegistry.WriteError) in
            do throws(ListValidationError) { return try ListVersion(document: document) } catch {
                throw .invalidList(error)
            }
        }
        var random = SeededGenerator(seed: 7)
        var live = Array(0..<10_000)
        var next = 10_000
        var samples: [Double] = []
        for round in 0..<400 {
            var ops: [String] = []
            for index in 0..<10 {
                let pick = live[Int.random(in: 0..<live.count, using: &random)]
                switch index % 4 {
                case 0:
                    ops.append(#"{"op":"insertItems","items":[\#(Self.itemText(next))],"after":"i\#(pick)"}"#)
                    live.append(next)
                    next += 1
                case 1:
                    let edited = Self.itemText(pick, tag: " edited \(round)")
                    ops.append(#"{"op":"updateItems","items":[\#(edited)]}"#)
                case 2:
                    var anchor = pick
                    while anchor == pick { anchor = live[Int.random(in: 0..<live.count, using: &random)] }
                    ops.append(#"{"op":"moveItem","id":"i\#(pick)","before":"i\#(anchor)"}"#)
                default:
                    ops.append(#"{"op":"removeItems","ids":["i\#(pick)"]}"#)
                    live.removeAll { $0 == pick }
                }
            }
            let body = Array(#"{"ops":[\#(ops.joined(separator: ","))]}"#.utf8)
            var failure: (any Error)?
            samples.append(
                milliseconds {
                    do {
                        let json = try JSONParser().parse(body)
                        _ = try registry.write("list", mustExist: true) { previous throws(ListRegistry.WriteError) in
                            do throws(OpError) { return try previous!.applying(opsDocument: json) } catch {
                                throw .invalidOp(error)
                            }
                        }
                    } catch { failure = error }
                })
            if let failure { throw failure }
        }
        return Self.percentiles("ops-batch-10-on-10k (durable)", samples)
    }

    func putOnePercent() throws -> String {
        let (registry, _) = try registry("put")
        var samples: [Double] = []
        for round in 0..<120 {
            // 1% of 10,000: 50 items change content, 25 are removed, 25 are new.
            let text = Self.documentText(sections: 10, perSection: 1000) { id in
                let slot = (id + round * 37) % 100
                if slot == 0 { return Self.itemText(id, tag: " round \(round)") }
                if slot == 50 { return Self.itemText(id, tag: " again \(round)") }
                if slot == 25 && id % 200 < 100 { return "" }
                if slot == 75 && id % 200 < 100 {
                    return Self.itemText(id) + "," + Self.itemText(1_000_000 + round * 10_000 + id)
                }
                return nil
            }
            let body = Array(text.utf8)
            var failure: (any Error)?
            let elapsed = milliseconds {
                do {
                    let json = try JSONParser().parse(body)
                    _ = try registry.write("list") { previous throws(ListRegistry.WriteError) in
                        do throws(ListValidationError) {
                            if let previous { return try previous.replacing(with: json) }
                            return try ListVersion(document: json)
                        } catch {
                            throw .invalidList(error)
                        }
                    }
                } catch { failure = error }
            }
            if let failure { throw failure }
            if round > 0 { samples.append(elapsed) }
        }
        return Self.percentiles("put-10k-1pct (durable)", samples)
    }

    func startup() throws -> String {
        let path = folder.appendingPathComponent("startup.sqlite").path
        do {
            let store = try SQLiteListStore(path: path)
            // 1,000,000 items: 4 lists of 100 sections of 2,500 items.
            for list in 0..<4 {
                let document = try JSONParser().parse(Self.documentText(sections: 100, perSection: 2_500))
                try store.commit(list: "list-\(list)", previous: nil, next: ListVersion(document: document))
            }
        }
        let bytes = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        var samples: [Double] = []
        var loaded = 0
        for _ in 0..<3 {
            var failure: (any Error)?
            samples.append(
                milliseconds {
                    do {
                        let registry = ListRegistry(store: try SQLiteListStore(path: path), limits: ListLimits())
                        loaded = try (0..<4).reduce(0) {
                            $0 + (try registry.loadedVersion(of: "list-\($1)")?.itemCount ?? 0)
                        }
                    } catch { failure = error }
                })
            if let failure { throw failure }
        }
        let sorted = samples.sorted()
        return
            "startup-1m: open + load 4 lists on demand, \(loaded) items (\(bytes / 1_000_000) MB file): median \((sorted[1] / 10).rounded() / 100) s (min \((sorted[0] / 10).rounded() / 100), max \((sorted[2] / 10).rounded() / 100))"
    }
}
