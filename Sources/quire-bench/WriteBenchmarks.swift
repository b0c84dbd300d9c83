import Foundation
import QuireCore

/// Where a one-item insert's time goes on the server's write path, without HTTP: `bench.py writes` inserts one
/// item at a time into 1,000 lists of the store in memory, and this makes the same writes through the same
/// registry, timing each part of a write on its own as the lists grow (parsing the body, the ops decoded and
/// applied, the rows that change found (what a SQLite file stores), and the whole commit: apply and publish).
///
/// `quire-bench writes` prints, for each band of list sizes, the mean of each part in microseconds.
struct WriteBenchmarks {
    let lists = 1_000
    let bands = [0, 50, 100, 200, 400]

    func run() throws {
        let registry = ListRegistry(store: InMemoryListStore(), limits: ListLimits())
        let empty = try JSONParser().parse(Array(#"{"sections":[{"id":"s","items":[]}]}"#.utf8))
        for list in 0..<lists {
            _ = try registry.write("w\(list)") { _ throws(ListRegistry.WriteError) in .replace(empty) }
        }
        var random = SeededGenerator(seed: 11)
        var counter = 0
        print("write path, one-item inserts into \(lists) lists (store in memory), mean µs per write:")
        print("items per list  parse  apply  rows  commit(apply+publish)")
        func microseconds(_ body: () -> Void) -> Double { milliseconds(body) * 1_000 }
        for (low, high) in zip(bands, bands.dropFirst()) {
            var parse = 0.0
            var apply = 0.0
            var rows = 0.0
            var commit = 0.0
            let writes = (high - low) * lists
            for _ in 0..<writes {
                counter += 1
                let name = "w\(Int.random(in: 0..<lists, using: &random))"
                let body = Array(
                    #"{"ops":[{"op":"insertItems","section":"s","items":[{"id":"t-\#(counter)","type":"row","data":{"n":\#(counter)}}]}]}"#
                        .utf8)
                var document: JSONValue = .null
                parse += microseconds { document = try! JSONParser().parse(body) }
                let write = ListWrite.ops(document)
                let base = registry.version(of: name)!
                var next: ListVersion?
                apply += microseconds { next = try! write.apply(to: base, limits: base.limits) }
                rows += microseconds { _ = next!.storageChanges(since: base, keepsLabels: true) }
                commit += microseconds {
                    _ = try! registry.write(name, mustExist: true) { _ throws(ListRegistry.WriteError) in write }
                }
            }
            let count = Double(writes)
            print(
                "\(low)-\(high)".padding(toLength: 16, withPad: " ", startingAt: 0)
                    + [parse, apply, rows, commit].map { String(format: "%6.1f", $0 / count) }.joined(separator: " "))
        }
    }
}
