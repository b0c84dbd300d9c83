import Glibc
import QuireCore

/// What a session's answer costs as its window grows: the answer must cost what changed and what is
/// sent, not what the client holds. One section of 20,000 items; each figure is the time to answer and
/// encode one request, at a 100-item and at a 20,000-item window, and their ratio next to its target.
struct SessionBenchmarks {
    static let listSize = 20_000

    func run(only: Set<String>) {
        let figures: [(String, () -> [String])] = [
            ("extend-next-50", extendNext), ("changes-after-1-write", changesAfterOneWrite),
            ("extend-with-keep", extendWithKeep), ("ids-1m-memory", idChurnMemory),
        ]
        for (name, figure) in figures where only.isEmpty || only.contains(name) {
            for line in figure() { print(line) }
        }
    }

    private let version: ListVersion = {
        try! ListVersion(document: DiffBenchmarks.document(sections: 1, items: SessionBenchmarks.listSize))
    }()

    private func session(window size: Int, bound: WindowBound = .none) -> Session {
        let window = version.window(range: 0..<size)
        return Session(
            id: "bench", list: "bench", format: .batch, limit: 50, window: SessionWindow(window, of: version),
            bound: bound)
    }

    /// Median milliseconds of `body` over `rounds` runs (after two warm-up runs).
    private func median(rounds: Int = 41, _ body: () -> Void) -> Double {
        body()
        body()
        var samples = (0..<rounds).map { _ in milliseconds(body) }
        samples.sort()
        return samples[samples.count / 2]
    }

    private func encode(_ answer: SessionAnswer) -> Int {
        var out: [UInt8] = []
        switch answer.content {
        case .changes(let changes): changes.encodeBatch(into: &out)
        case .reset(let window): window.encodeSections(into: &out)
        case .unchanged: break
        }
        return out.count
    }

    private func lines(_ name: String, small: Double, large: Double, target: Double) -> [String] {
        let ratio = large / small
        return [
            "\(name) at a 100-item window: \(format(small)) ms",
            "\(name) at a 20,000-item window: \(format(large)) ms",
            "\(name) ratio 20,000 / 100: \(format(ratio))x (target <= \(format(target))x) \(ratio <= target ? "ok" : "MISSED")",
        ]
    }

    /// `changes?extend=next&limit=50` with nothing written in between.
    func extendNext() -> [String] {
        func time(_ size: Int) -> Double {
            let session = session(window: size)
            return median {
                let answer = try! session.answer(
                    since: version.version, latest: version, change: .extendNext(50), resetShare: 0.5)
                _ = encode(answer)
            }
        }
        return lines("extend-next-50", small: time(100), large: time(Self.listSize - 100), target: 1.5)
    }

    /// `changes?since=` after one `updateItems` of an item inside the window.
    func changesAfterOneWrite() -> [String] {
        let updated = try! version.applying(opsDocument: [
            "ops": [["op": "updateItems", "items": [DiffBenchmarks.item("i50", "edited")]]]
        ])
        func time(_ size: Int) -> Double {
            let session = session(window: size)
            return median {
                let answer = try! session.answer(
                    since: version.version, latest: updated, change: .update, resetShare: 0.5)
                _ = encode(answer)
            }
        }
        return lines("changes-after-1-write", small: time(100), large: time(Self.listSize), target: 1.5)
    }

    /// Scrolling a bounded window (`keep` 500): each extend adds 50 and trims 50, at any depth of scroll.
    func extendWithKeep() -> [String] {
        func time(start: Int) -> Double {
            let window = version.window(range: start..<(start + 500))
            let session = Session(
                id: "bench", list: "bench", format: .batch, limit: 50, window: SessionWindow(window, of: version),
                bound: WindowBound(keep: 500))
            return median {
                _ = encode(
                    try! session.answer(
                        since: version.version, latest: version, change: .extendNext(50), resetShare: 0.5))
            }
        }
        let early = time(start: 0)
        let deep = time(start: Self.listSize - 600)
        return [
            "extend-with-keep-500 near the start: \(format(early)) ms",
            "extend-with-keep-500 19,400 items down: \(format(deep)) ms",
            "extend-with-keep-500 ratio deep / start: \(format(deep / early))x (target <= 1.5x) \(deep / early <= 1.5 ? "ok" : "MISSED")",
        ]
    }

    /// A feed that receives 1,000,000 distinct ids over its life: 1,000 new items at the head and the 1,000
    /// oldest removed, 1,000 times, through the registry (which compacts the id table), with three sessions
    /// answered after every write. Resident memory is read after the first 50,000 ids and at the end.
    func idChurnMemory() -> [String] {
        let registry = ListRegistry(store: InMemoryListStore(), limits: ListLimits(maxItems: 100_000))
        func item(_ id: String) -> JSONValue { ["id": .string(id), "type": "row", "data": ["id": .string(id)]] }
        var next = 0
        func fresh(_ count: Int) -> [String] {
            defer { next += count }
            return (next..<(next + count)).map { "feed-item-\($0)" }
        }
        var live = fresh(5_000)
        _ = try! registry.write("feed") { _ throws(ListRegistry.WriteError) in
            try! ListVersion(document: ["sections": [["id": "all", "items": .array(live.map(item))]]])
        }
        let first = registry.version(of: "feed")!
        var sessions = [first.firstPage(limit: 50), first.page(around: "feed-item-2500", limit: 50)!].map {
            Session(
                id: "s", list: "feed", format: .batch, limit: 50, window: SessionWindow($0, of: first),
                bound: WindowBound(keep: 200))
        }
        var lineages = Set<ObjectIdentifier>()
        var baseline = 0.0
        while next < 1_000_000 {
            if next >= 50_000 && baseline == 0 { baseline = residentMegabytes() }
            if next % 100_000 == 0, getenv("QUIRE_BENCH_DETAIL") != nil {
                print("  \(next) ids: \(format(residentMegabytes())) MB")
            }
            let added = fresh(1_000)
            let removed = Array(live.suffix(1_000))
            live = added + live.dropLast(1_000)
            _ = try! registry.write("feed") { current throws(ListRegistry.WriteError) in
                try! current!.applying(opsDocument: [
                    "ops": [
                        [
                            "op": "insertItems", "section": "all", "items": .array(added.map(item)),
                            "before": .string(live[1_000]),
                        ],
                        ["op": "removeItems", "ids": .array(removed.map { .string($0) })],
                    ]
                ])
            }
            let latest = registry.version(of: "feed")!
            lineages.insert(ObjectIdentifier(latest.interner))
            for index in sessions.indices {
                let answer = try! sessions[index].answer(
                    since: sessions[index].current.version.version, latest: latest, change: .update, resetShare: 0.5)
                sessions[index] = answer.session
            }
        }
        let growth = residentMegabytes() - baseline
        let table = registry.version(of: "feed")!.interner.count
        return [
            "ids-1m-memory: 1,000,000 ids through a 5,000-item feed with sessions open: resident +\(format(growth)) MB after the first 50,000 (target <= 20 MB) \(growth <= 20 ? "ok" : "MISSED"); id table \(table) ids at the end, \(lineages.count) tables over the run"
        ]
    }

    /// Resident memory of this process, from /proc/self/statm.
    private func residentMegabytes() -> Double {
        guard let file = fopen("/proc/self/statm", "r") else { return .nan }
        defer { fclose(file) }
        var size = 0
        var resident = 0
        guard
            withUnsafeMutablePointer(
                to: &size,
                { size in
                    withUnsafeMutablePointer(to: &resident) { resident in
                        withVaList([size, resident]) { vfscanf(file, "%ld %ld", $0) }
                    }
                }) == 2
        else { return .nan }
        return Double(resident) * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    private func format(_ value: Double) -> String {
        "\((value * 1000).rounded() / 1000)"
    }
}
