import QuireCore

/// Random sectioned lists and random edits of them, for the property tests.
struct RandomLists {
    var random: SeededGenerator
    private var nextID = 0

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
    }

    mutating func freshID(_ prefix: String) -> String {
        nextID += 1
        return "\(prefix)\(nextID)"
    }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func data() -> JSONValue {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return .null
        case 1: return .int(Int64.random(in: -5...5, using: &random))
        case 2: return .string(["a", "b", "Ω", "q\"uote"][Int.random(in: 0..<4, using: &random)])
        default: return .object(["n": .int(Int64.random(in: 0...3, using: &random))])
        }
    }

    mutating func item(depth: Int = 0) -> TestItem {
        var item = TestItem(id: freshID("i"), data: data())
        if depth < 2, chance(15) {
            item.children = (0..<Int.random(in: 1...3, using: &random)).map { _ in self.item(depth: depth + 1) }
        }
        return item
    }

    /// 0–8 sections, 0–30 top-level items in all, some with children, some sections empty.
    mutating func list() -> TestList {
        var list = TestList()
        let sectionCount = Int.random(in: 0...8, using: &random)
        for _ in 0..<sectionCount {
            list.sections.append(
                TestSection(id: freshID("s"), header: chance(30) ? .object(["type": "day", "data": data()]) : .null))
        }
        guard sectionCount > 0 else { return list }
        for _ in 0..<Int.random(in: 0...30, using: &random) {
            list.sections[Int.random(in: 0..<sectionCount, using: &random)].items.append(item())
        }
        return list
    }

    /// A random mix of edits: item deletes, inserts, moves within and across sections, content changes,
    /// section inserts, deletes, moves and header changes.
    mutating func edit(_ list: TestList) -> TestList {
        var list = list
        let editCount = Int.random(in: 0...8, using: &random)
        for _ in 0..<editCount {
            let kind = Int.random(in: 0..<9, using: &random)
            let sectionCount = list.sections.count
            if sectionCount == 0 || kind == 0 {
                let index = Int.random(in: 0...sectionCount, using: &random)
                var section = TestSection(id: freshID("s"))
                section.items = (0..<Int.random(in: 0...3, using: &random)).map { _ in item() }
                list.sections.insert(section, at: index)
                continue
            }
            let s = Int.random(in: 0..<sectionCount, using: &random)
            switch kind {
            case 1:
                if chance(40) { list.sections.remove(at: s) }
            case 2:
                let section = list.sections.remove(at: s)
                list.sections.insert(section, at: Int.random(in: 0...list.sections.count, using: &random))
            case 3:
                list.sections[s].header = chance(50) ? .object(["type": "day", "data": data()]) : .null
            case 4:
                let count = list.sections[s].items.count
                list.sections[s].items.insert(item(), at: Int.random(in: 0...count, using: &random))
            case 5:
                if !list.sections[s].items.isEmpty {
                    list.sections[s].items.remove(at: Int.random(in: 0..<list.sections[s].items.count, using: &random))
                }
            case 6:
                guard !list.sections[s].items.isEmpty else { continue }
                let moved = list.sections[s].items.remove(
                    at: Int.random(in: 0..<list.sections[s].items.count, using: &random))
                let target = chance(50) ? s : Int.random(in: 0..<sectionCount, using: &random)
                list.sections[target].items.insert(
                    moved, at: Int.random(in: 0...list.sections[target].items.count, using: &random))
            case 7:
                guard !list.sections[s].items.isEmpty else { continue }
                let index = Int.random(in: 0..<list.sections[s].items.count, using: &random)
                list.sections[s].items[index].data = .string(freshID("d"))
            default:
                guard !list.sections[s].items.isEmpty else { continue }
                let index = Int.random(in: 0..<list.sections[s].items.count, using: &random)
                if list.sections[s].items[index].children.isEmpty {
                    list.sections[s].items[index].children = [item(depth: 1)]
                } else {
                    list.sections[s].items[index].children.removeLast()
                }
            }
        }
        return list
    }

    /// A random subset of the list's parents.
    mutating func expanded(_ list: TestList) -> Set<String> {
        Set(list.parentIDs.filter { _ in chance(50) })
    }

    /// A random range of visible positions in a list of `total` items: usually all of it.
    mutating func range(total: Int) -> Range<Int> {
        guard total > 0, chance(30) else { return 0..<total }
        let start = Int.random(in: 0...total, using: &random)
        return start..<Int.random(in: start...total, using: &random)
    }
}
