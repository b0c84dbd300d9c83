import QuireCore

/// Random ops batches, valid on a model of the list that they keep up to date: what a producer sends, so
/// that versions come from ops (and carry a change log) as they do in the service.
extension RandomLists {
    /// A batch of 1–3 ops valid on `list`, as the JSON body of `POST …/ops`, and the list after them.
    mutating func opsBatch(on list: TestList) -> (body: JSONValue, list: TestList) {
        var list = list
        var ops: [JSONValue] = []
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            if let op = op(on: &list) { ops.append(op) }
        }
        return (.object(["ops": .array(ops)]), list)
    }

    /// Where an item is: its section and the indexes down to it.
    private struct Place {
        let section: Int
        let path: [Int]
    }

    private func places(in list: TestList) -> [Place] {
        var result: [Place] = []
        func walk(_ items: [TestItem], section: Int, prefix: [Int]) {
            for (index, item) in items.enumerated() {
                result.append(Place(section: section, path: prefix + [index]))
                walk(item.children, section: section, prefix: prefix + [index])
            }
        }
        for (index, section) in list.sections.enumerated() { walk(section.items, section: index, prefix: []) }
        return result
    }

    private func item(at place: Place, in list: TestList) -> TestItem {
        var item = list.sections[place.section].items[place.path[0]]
        for index in place.path.dropFirst() { item = item.children[index] }
        return item
    }

    private func modify(_ place: Place, in list: inout TestList, _ body: (inout [TestItem], Int) -> Void) {
        func descend(_ items: inout [TestItem], _ path: ArraySlice<Int>) {
            if path.count == 1 {
                body(&items, path.first!)
            } else {
                descend(&items[path.first!].children, path.dropFirst())
            }
        }
        descend(&list.sections[place.section].items, place.path[...])
    }

    /// The anchor members placing something at `index` among `ids` (`after`, `before`, or none: the end).
    private mutating func anchor(_ index: Int, among ids: [String]) -> [String: JSONValue] {
        if index == ids.count { return chance(50) || ids.isEmpty ? [:] : ["after": .string(ids[index - 1])] }
        if index > 0 && chance(50) { return ["after": .string(ids[index - 1])] }
        return ["before": .string(ids[index])]
    }

    private mutating func op(on list: inout TestList) -> JSONValue? {
        let places = places(in: list)
        let kind = Int.random(in: 0..<100, using: &random)
        if list.sections.isEmpty || kind < 6 {
            let index = Int.random(in: 0...list.sections.count, using: &random)
            var section = TestSection(id: freshID("s"))
            section.items = (0..<Int.random(in: 0...4, using: &random)).map { _ in item() }
            if chance(30) { section.header = .object(["type": "day", "data": data()]) }
            var members = anchor(index, among: list.sections.map(\.id))
            list.sections.insert(section, at: index)
            members["op"] = "insertSections"
            members["sections"] = .array([section.json])
            return .object(members)
        }
        let s = Int.random(in: 0..<list.sections.count, using: &random)
        switch kind {
        case 6..<9:
            let id = list.sections.remove(at: s).id
            return .object(["op": "removeSections", "ids": .array([.string(id)])])
        case 9..<11:
            let section = list.sections.remove(at: s)
            let target = Int.random(in: 0...list.sections.count, using: &random)
            var members = anchor(target, among: list.sections.map(\.id))
            list.sections.insert(section, at: target)
            members["op"] = "moveSection"
            members["id"] = .string(section.id)
            return .object(members)
        case 11..<16:
            let header: JSONValue = chance(50) ? .object(["type": "day", "data": data()]) : .null
            list.sections[s].header = header
            return .object(["op": "updateSection", "id": .string(list.sections[s].id), "header": header])
        case 16..<45:
            let ids = list.sections[s].items.map(\.id)
            let index = Int.random(in: 0...ids.count, using: &random)
            let items = (0..<Int.random(in: 1...3, using: &random)).map { _ in item() }
            var members = anchor(index, among: ids)
            list.sections[s].items.insert(contentsOf: items, at: index)
            members["op"] = "insertItems"
            members["section"] = .string(list.sections[s].id)
            members["items"] = .array(items.map(\.json))
            return .object(members)
        case 45..<52:
            guard let place = places.filter({ $0.path.count == 1 }).randomElement(using: &random) else { return nil }
            let parent = item(at: place, in: list)
            let child = item(depth: 1)
            modify(place, in: &list) { items, index in items[index].children.append(child) }
            return .object(["op": "insertItems", "parent": .string(parent.id), "items": .array([child.json])])
        case 52..<67:
            guard let place = places.randomElement(using: &random) else { return nil }
            let id = item(at: place, in: list).id
            modify(place, in: &list) { items, index in items.remove(at: index) }
            return .object(["op": "removeItems", "ids": .array([.string(id)])])
        case 67..<82:
            guard let place = places.randomElement(using: &random) else { return nil }
            var updated = item(at: place, in: list)
            updated.data = .string(freshID("d"))
            modify(place, in: &list) { items, index in items[index].data = updated.data }
            return .object([
                "op": "updateItems",
                "items": .array([.object(["id": .string(updated.id), "type": "cell", "data": updated.data])]),
            ])
        default:
            guard let place = places.filter({ $0.path.count == 1 }).randomElement(using: &random) else { return nil }
            let moved = item(at: place, in: list)
            list.sections[place.section].items.remove(at: place.path[0])
            if chance(15),
                let parentPlace = self.places(in: list).filter({ $0.path.count == 1 }).randomElement(
                    using: &random), moved.children.isEmpty
            {
                let parent = item(at: parentPlace, in: list)
                modify(parentPlace, in: &list) { items, index in items[index].children.append(moved) }
                return .object(["op": "moveItem", "id": .string(moved.id), "parent": .string(parent.id)])
            }
            let target = chance(60) ? place.section : Int.random(in: 0..<list.sections.count, using: &random)
            let ids = list.sections[target].items.map(\.id)
            let index = Int.random(in: 0...ids.count, using: &random)
            var members = anchor(index, among: ids)
            list.sections[target].items.insert(moved, at: index)
            members["op"] = "moveItem"
            members["id"] = .string(moved.id)
            members["section"] = .string(list.sections[target].id)
            return .object(members)
        }
    }
}
