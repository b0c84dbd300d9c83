import Foundation
import QuireCore
import QuireStore

/// `quire-bench seed-lists PATH COUNT ITEMS`: writes COUNT lists of ITEMS small items each (`u-0` … in one
/// section, message-like items of about 150 bytes) into the SQLite file at PATH, a thousand lists per
/// transaction: the data set of `scripts/bench.py working-set`, written at the store's bulk speed rather than
/// through HTTP.
enum SeedLists {
    static func run(_ arguments: [String]) throws {
        guard arguments.count == 3, let count = Int(arguments[1]), let items = Int(arguments[2]) else {
            print("usage: quire-bench seed-lists PATH COUNT ITEMS")
            exit(64)
        }
        let store = try SQLiteListStore(path: arguments[0])
        let people = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken"]
        var next = 0
        while next < count {
            let batch = next..<min(count, next + 1_000)
            let lists = try batch.map { index -> (name: String, version: ListVersion) in
                let elements = (0..<items).map { item -> JSONValue in
                    [
                        "id": .string("m-\(item)"), "type": "message",
                        "data": [
                            "from": .string(people[(index + item) % people.count]),
                            "text": .string("Message \(item) of list \(index), a line of text to show in a cell"),
                            "unread": .bool(item % 3 == 0),
                        ],
                    ]
                }
                let document: JSONValue = ["sections": [["id": "inbox", "items": .array(elements)]]]
                return ("u-\(index)", try ListVersion(document: document))
            }
            try store.create(lists)
            next = batch.upperBound
        }
        try store.close()
    }
}
