extension ClientWindow {
    /// Applies decoded `sequential` ops one at a time, each against the state the previous one left.
    /// Every op is checked (indexes in range, ids matching what they name) before it applies.
    ///
    /// - Throws: ``ChangeError`` naming the failing op; the window is unchanged.
    public mutating func apply(_ ops: [SequentialOp]) throws {
        var state = sections
        for (number, op) in ops.enumerated() {
            func fail(_ message: String) -> ChangeError { ChangeError("op \(number): \(message)") }
            func checkItem(_ path: [Int], insertion: Bool = false) throws {
                guard path.count == 2, state.indices.contains(path[0]), path[1] >= 0,
                    path[1] < state[path[0]].items.count + (insertion ? 1 : 0)
                else { throw fail("index path \(path) out of range") }
            }
            switch op {
            case .deleteSection(let index, let id):
                guard state.indices.contains(index), state[index].id == id else {
                    throw fail("no section \(id) at \(index)")
                }
                state.remove(at: index)
            case .insertSection(let index, let section):
                guard index >= 0, index <= state.count else { throw fail("section index \(index) out of range") }
                state.insert(section, at: index)
            case .moveSection(let from, let to, let id):
                guard state.indices.contains(from), state[from].id == id else {
                    throw fail("no section \(id) at \(from)")
                }
                let section = state.remove(at: from)
                guard to >= 0, to <= state.count else { throw fail("section index \(to) out of range") }
                state.insert(section, at: to)
            case .deleteItem(let at, let id):
                try checkItem(at)
                guard state[at[0]].items[at[1]]["id"]?.stringValue == id else { throw fail("no item \(id) at \(at)") }
                state[at[0]].items.remove(at: at[1])
            case .insertItem(let at, let item):
                try checkItem(at, insertion: true)
                state[at[0]].items.insert(item, at: at[1])
            case .moveItem(let from, let to, let id):
                try checkItem(from)
                guard state[from[0]].items[from[1]]["id"]?.stringValue == id else {
                    throw fail("no item \(id) at \(from)")
                }
                let item = state[from[0]].items.remove(at: from[1])
                try checkItem(to, insertion: true)
                state[to[0]].items.insert(item, at: to[1])
            case .updateItem(let at, let item):
                try checkItem(at)
                guard state[at[0]].items[at[1]]["id"] == item["id"] else { throw fail("\(at) holds another item") }
                state[at[0]].items[at[1]] = item
            case .updateSection(let index, let id, let header, let footer):
                guard state.indices.contains(index), state[index].id == id else {
                    throw fail("no section \(id) at \(index)")
                }
                state[index].header = header
                state[index].footer = footer
            }
        }
        sections = state
    }
}
