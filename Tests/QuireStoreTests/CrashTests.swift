import Dispatch
import Foundation
import QuireCore
import QuireHTTP
import QuireStore
import QuireTesting
import Synchronization
import Testing

/// `quire serve` killed with SIGKILL in the middle of a stream of writes, again and again, on one file:
/// after every kill the file holds every acknowledged write, at most the one write in flight on top (whole,
/// never in part), and versions never went back.
@Suite("crash test", .serialized)
struct CrashTests {
    static let lists = ["alpha", "beta", "gamma"]
    static let json = [("Content-Type", "application/json")]

    /// Random writes computed against the test's own model of each list, so that every write is valid and
    /// its result is known before it is sent.
    struct Writes {
        var random: SeededGenerator
        var counter = 0

        mutating func freshID(_ prefix: String) -> String {
            counter += 1
            return "\(prefix)\(counter)"
        }

        mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }

        mutating func item(depth: Int = 0) -> String {
            let id = freshID("i")
            let data =
                #"{"n":\#(Int.random(in: 0...999, using: &random)),"text":"\#(String(repeating: "w", count: Int.random(in: 0...40, using: &random)))"}"#
            var children = ""
            if depth < 2, Int.random(in: 0..<100, using: &random) < 20 {
                children =
                    #","children":["#
                    + (0..<Int.random(in: 1...3, using: &random)).map { _ in item(depth: depth + 1) }.joined(
                        separator: ",") + "]"
            }
            return #"{"id":"\#(id)","type":"cell","data":\#(data)\#(children)}"#
        }

        mutating func document() -> String {
            let sections = (0..<Int.random(in: 1...4, using: &random)).map { _ in
                let items = (0..<Int.random(in: 0...25, using: &random)).map { _ in item() }
                return
                    #"{"id":"\#(freshID("s"))","header":{"type":"h","data":\#(counter)},"items":[\#(items.joined(separator: ","))]}"#
            }
            return #"{"sections":[\#(sections.joined(separator: ","))]}"#
        }

        /// A batch of 1–6 ops on `version`.
        mutating func ops(on version: ListVersion) throws -> String {
            let document = try JSONParser().parse(version.documentBytes)
            let sections = document["sections"]!.arrayValue!.map { $0["id"]!.stringValue! }
            var items: [String] = []
            func walk(_ list: [JSONValue]) {
                for item in list {
                    items.append(item["id"]!.stringValue!)
                    walk(item["children"]?.arrayValue ?? [])
                }
            }
            for section in document["sections"]!.arrayValue! { walk(section["items"]!.arrayValue!) }
            var ops: [String] = []
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                switch Int.random(in: 0..<8, using: &random) {
                case 0 where !sections.isEmpty:
                    ops.append(#"{"op":"insertItems","section":"\#(pick(sections))","items":[\#(item()),\#(item())]}"#)
                case 1 where !items.isEmpty:
                    ops.append(#"{"op":"insertItems","items":[\#(item())],"after":"\#(pick(items))"}"#)
                case 2 where !items.isEmpty:
                    ops.append(#"{"op":"removeItems","ids":["\#(pick(items))"]}"#)
                case 3 where items.count > 1:
                    ops.append(#"{"op":"moveItem","id":"\#(pick(items))","before":"\#(pick(items))"}"#)
                case 4 where !items.isEmpty:
                    ops.append(
                        #"{"op":"updateItems","items":[{"id":"\#(pick(items))","type":"cell","data":\#(counter)}]}"#)
                case 5:
                    ops.append(#"{"op":"insertSections","sections":[{"id":"\#(freshID("s"))","items":[\#(item())]}]}"#)
                case 6 where !sections.isEmpty:
                    ops.append(
                        #"{"op":"updateSection","id":"\#(pick(sections))","footer":{"type":"f","data":\#(counter)}}"#)
                default:
                    if sections.count > 1 {
                        ops.append(#"{"op":"moveSection","id":"\#(pick(sections))","after":"\#(pick(sections))"}"#)
                    }
                }
            }
            if ops.isEmpty { ops.append(#"{"op":"insertSections","sections":[{"id":"\#(freshID("s"))","items":[]}]}"#) }
            return #"{"ops":[\#(ops.joined(separator: ","))]}"#
        }
    }

    /// A write sent, and the version it makes if it commits.
    struct Write {
        let list: String
        let method: String
        let target: String
        let body: String
        let result: ListVersion
    }

    @Test("SIGKILL at random moments: acknowledged writes stay, nothing half-written, versions only grow")
    func killAndRestart() throws {
        let folder = TemporaryFolder()
        let path = folder.path("crash.sqlite")
        let seed = UInt64(Date().timeIntervalSince1970 * 1000)
        var writes = Writes(random: SeededGenerator(seed: seed))
        var model: [String: ListVersion] = [:]
        var totalAcknowledged = 0
        var inFlightCommitted = 0
        let kills = 30
        for round in 0..<kills {
            // The journal of writes applied at its default limit (never, in a round this short), after every write,
            // or every few: kills land before, inside and after its applications.
            let server = try QuireProcess.serve(storage: path, journalWrites: [nil, 1, 7][round % 3])
            let port = try server.waitForPort()
            try server.waitUntilReady(port: port)
            try checkServerVersions(port: port, model: model, round: round)

            // Kill it after a random delay while this thread keeps writing.
            let delay = Double.random(in: 0.02...0.3, using: &writes.random)
            let pid = server.pid
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { kill(pid, SIGKILL) }
            var pending: Write?
            let connection = try HTTPClientConnection(host: "127.0.0.1", port: port)
            for _ in 0..<100_000 {
                let list = writes.pick(Self.lists)
                let write: Write
                if let current = model[list], Int.random(in: 0..<100, using: &writes.random) < 70 {
                    let body = try writes.ops(on: current)
                    guard let result = try? current.applying(opsDocument: JSONParser().parse(body)) else { continue }
                    write = Write(
                        list: list, method: "POST", target: "/v1/lists/\(list)/ops", body: body, result: result)
                } else {
                    let body = writes.document()
                    let parsed = try JSONParser().parse(body)
                    let result = try model[list]?.replacing(with: parsed) ?? ListVersion(document: parsed)
                    write = Write(list: list, method: "PUT", target: "/v1/lists/\(list)", body: body, result: result)
                }
                pending = write
                guard
                    let response = try? connection.request(
                        write.method, write.target, headers: Self.json, body: Array(write.body.utf8))
                else { break }
                guard response.status == 200 || response.status == 201,
                    response.text.contains(#""version":\#(write.result.version)"#)
                else {
                    Issue.record("seed \(seed): \(write.method) \(write.target) \(write.body) → \(response.text)")
                    return
                }
                model[list] = write.result
                pending = nil
                totalAcknowledged += 1
            }
            #expect(server.waitForExit() != nil)

            // The file as the killed process left it, read by the store directly.
            let stored = try SQLiteListStore(path: path).loadAll(limits: ListLimits())
            for list in Self.lists {
                let acknowledged = model[list]
                let found = stored[list]
                if let pending, pending.list == list, let found,
                    found.documentBytes == pending.result.documentBytes, found.version == pending.result.version
                {
                    model[list] = pending.result
                    inFlightCommitted += 1
                    continue
                }
                #expect(found?.version == acknowledged?.version, "seed \(seed), round \(round), list \(list): version")
                #expect(
                    found?.documentBytes == acknowledged?.documentBytes,
                    "seed \(seed), round \(round), list \(list): content")
            }
        }
        // One last start on the same file: the server serves what the model holds.
        let server = try QuireProcess.serve(storage: path)
        let port = try server.waitForPort()
        try server.waitUntilReady(port: port)
        try checkServerVersions(port: port, model: model, round: kills)
        kill(server.pid, SIGTERM)
        #expect(server.waitForExit() == 0)
        #expect(totalAcknowledged > kills)
        print(
            "crash test (seed \(seed)): \(kills) kills, \(totalAcknowledged) acknowledged writes, \(inFlightCommitted) in-flight writes found committed"
        )
    }

    @Test(
        "64 producers at once, some refused, SIGKILL, restart: every acknowledged write there, no refused one, versions gapless"
    )
    func concurrentProducersKilled() throws {
        let folder = TemporaryFolder()
        let path = folder.path("producers.sqlite")
        let lists = (0..<16).map { "p\($0)" }
        var acknowledged: [String: Set<String>] = [:]
        var refused = Set<String>()
        for round in 0..<3 {
            let server = try QuireProcess.serve(storage: path, journalWrites: [nil, 16, 200][round])
            let port = try server.waitForPort()
            try server.waitUntilReady(port: port)
            if round == 0 {
                for list in lists {
                    let response = try HTTPClientConnection(host: "127.0.0.1", port: port).request(
                        "PUT", "/v1/lists/\(list)", headers: Self.json,
                        body: Array(#"{"sections":[{"id":"s","items":[]}]}"#.utf8))
                    #expect(response.status == 201)
                }
            }
            let pid = server.pid
            DispatchQueue.global().asyncAfter(deadline: .now() + Double(round) * 0.3 + 0.4) { kill(pid, SIGKILL) }
            let acks = Mutex<[(list: String, id: String, version: Int)]>([])
            let refusals = Mutex<[String]>([])
            try concurrently(64) { producer in
                guard let connection = try? HTTPClientConnection(host: "127.0.0.1", port: port) else { return }
                for n in 0..<100_000 {
                    let list = lists[(producer + n) % lists.count]
                    let id = "r\(round)-p\(producer)-\(n)"
                    var headers = Self.json
                    var op = #"{"op":"insertItems","section":"s","items":[{"id":"\#(id)","type":"t"}]}"#
                    switch n % 10 {
                    case 3: headers.append(("If-Match", "\"1\""))  // stale from the second write on: 412
                    case 7: op = #"{"op":"removeItems","ids":["\#(id)"]},"# + op  // the id does not exist: 422
                    default: break
                    }
                    guard
                        let response = try? connection.request(
                            "POST", "/v1/lists/\(list)/ops", headers: headers, body: Array(#"{"ops":[\#(op)]}"#.utf8))
                    else { return }
                    switch response.status {
                    case 200:
                        let version = (try? JSONParser().parse(response.body)["version"]?.intValue).flatMap { $0 }
                        acks.withLock { $0.append((list, id, Int(version ?? -1))) }
                    case 412, 422: refusals.withLock { $0.append(id) }
                    default:
                        Issue.record("\(response.status) \(response.text)")
                        return
                    }
                }
            }
            #expect(server.waitForExit() != nil)
            for ack in acks.withLock({ $0 }) { acknowledged[ack.list, default: []].insert(ack.id) }
            refused.formUnion(refusals.withLock { $0 })
            // Acknowledged versions of a list never repeat.
            let versions = Dictionary(grouping: acks.withLock { $0 }, by: \.list).mapValues { $0.map(\.version) }
            for (list, numbers) in versions { #expect(Set(numbers).count == numbers.count, "\(list): a version twice") }

            let stored = try SQLiteListStore(path: path).loadAll(limits: ListLimits())
            for list in lists {
                let version = try #require(stored[list])
                let ids = Set(version.window(range: 0..<version.visibleCount()).itemIDs)
                #expect(
                    acknowledged[list, default: []].isSubset(of: ids),
                    "round \(round), \(list): an acknowledged write lost")
                #expect(ids.isDisjoint(with: refused), "round \(round), \(list): a refused write stored")
                // Each version added one item: the version counts every write stored, none skipped or doubled.
                #expect(Int(version.version) == ids.count + 1, "round \(round), \(list): versions not gapless")
            }
        }
        #expect(acknowledged.values.map(\.count).reduce(0, +) > 100)
        #expect(refused.count > 10)
    }

    /// The versions the restarted server lists are the model's.
    func checkServerVersions(port: Int, model: [String: ListVersion], round: Int) throws {
        let response = try HTTPClientConnection(host: "127.0.0.1", port: port).request("GET", "/v1/lists")
        let lists = try JSONParser().parse(response.body)["lists"]!.arrayValue!
        var versions: [String: Int64] = [:]
        for list in lists { versions[list["list"]!.stringValue!] = list["version"]!.intValue! }
        #expect(versions == model.mapValues { Int64($0.version) }, "round \(round)")
    }
}
