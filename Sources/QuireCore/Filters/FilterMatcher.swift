/// A filter prepared for matching many items: strings and keys held as bytes, each `in` as sorted values for a
/// binary search, and the members of `data` that the terms read found in one pass over each item.
///
/// Building a view matches every top-level item of a list against one filter. A term reads the item's bytes up
/// to its field's value (``FilterItem``) and compares the value where it lies: no ``JSONValue`` is built, and a
/// string is copied only when it holds escapes or, for `contains`, non-ASCII text to fold. Why a prepared form
/// rather than matching on ``ListFilter`` itself: reading a Swift `String` byte by byte costs several times more
/// than reading an array, an `in` of 100 strings searched one by one costs a hundred comparisons, and terms that
/// each walked `data` from its start would read its first members once per term.
///
/// Semantics (openapi.yaml), the same in ``ListFilter/matches(_:)``: an absent field matches only `ne` and
/// `exists: false`; `eq`, `ne` and `in` compare scalars of the same kind (numbers by value, strings by bytes; an
/// object or an array equals nothing); `lt`…`gte` match a number against a number or a string against a string
/// (by UTF-8 bytes), nothing else; `contains` matches a string whose case fold contains the (folded) text.
public struct FilterMatcher: Sendable {
    private let root: Node
    /// The distinct first keys after `data` in the terms' fields; a term's ``Field/data(slot:rest:)`` indexes
    /// this array.
    private let dataKeys: [[UInt8]]

    /// `filter` prepared for matching.
    ///
    /// - Complexity: O(*n* log *n*) in the size of the filter.
    public init(_ filter: ListFilter) {
        var dataKeys: [[UInt8]] = []
        root = Node(filter, dataKeys: &dataKeys)
        self.dataKeys = dataKeys
    }

    /// Whether `item` belongs to the filtered list. `all` and `any` stop at the first member that decides.
    ///
    /// - Complexity: O(*n*) in the item's bytes up to the last member of `data` a term reads (found in one pass,
    ///   when the first term on `data` is evaluated), plus per term a nested path's walk, O(log *v*) comparisons
    ///   for an `in` of *v* values, or O(*k* · *m*) for a `contains` of *m* bytes in a string of *k*.
    public func matches(_ item: FilterItem) -> Bool {
        item.bytes.withUnsafeBufferPointer { buffer in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: max(dataKeys.count, 1)) { slots in
                var reading = Reading(scanner: JSONScanner(bytes: buffer), root: item.root, slots: slots)
                return root.evaluate(&reading, dataKeys: dataKeys)
            }
        }
    }
}

extension FilterMatcher {
    /// One item being matched: its bytes, its root members, and where the members of `data` in ``dataKeys``
    /// start, found on first need.
    private struct Reading {
        let scanner: JSONScanner
        let root: ItemRoot
        /// For each of ``FilterMatcher/dataKeys``, where its value starts in the item, or -1 when absent;
        /// uninitialized until ``slotsFound``.
        let slots: UnsafeMutableBufferPointer<Int>
        var slotsFound = false

        init(scanner: JSONScanner, root: ItemRoot, slots: UnsafeMutableBufferPointer<Int>) {
            self.scanner = scanner
            self.root = root
            self.slots = slots
        }

        /// Where the value of `field` starts, or `nil` when the item does not have it.
        mutating func start(of field: Field, dataKeys: [[UInt8]]) -> Int? {
            switch field {
            case .id: return root.id
            case .type: return root.type
            case .wholeData: return root.data
            case .data(let slot, let rest):
                if !slotsFound { findSlots(dataKeys) }
                var start = slots[slot]
                guard start >= 0 else { return nil }
                for key in rest {
                    guard let next = scanner.memberValue(named: key, inObjectAt: start) else { return nil }
                    start = next
                }
                return start
            }
        }

        /// Reads the members of `data` once, up to the last of `keys` (the first of a repeated key counts).
        private mutating func findSlots(_ keys: [[UInt8]]) {
            slotsFound = true
            slots.initialize(repeating: -1)
            guard let data = root.data else { return }
            var missing = keys.count
            let (scanner, slots) = (scanner, slots)
            scanner.forEachMember(ofObjectAt: data) { key, valueStart in
                for index in keys.indices where slots[index] < 0 && scanner.string(key, equals: keys[index]) {
                    slots[index] = valueStart
                    missing -= 1
                    break
                }
                return missing > 0
            }
        }
    }

    private indirect enum Node: Sendable {
        case term(Term)
        case all([Node])
        case any([Node])
        case not(Node)

        init(_ filter: ListFilter, dataKeys: inout [[UInt8]]) {
            switch filter {
            case .term(let term): self = .term(Term(term, dataKeys: &dataKeys))
            case .all(let filters): self = .all(filters.map { Node($0, dataKeys: &dataKeys) })
            case .any(let filters): self = .any(filters.map { Node($0, dataKeys: &dataKeys) })
            case .not(let filter): self = .not(Node(filter, dataKeys: &dataKeys))
            }
        }

        func evaluate(_ reading: inout Reading, dataKeys: [[UInt8]]) -> Bool {
            switch self {
            case .term(let term):
                return term.evaluate(&reading, dataKeys: dataKeys)
            case .all(let nodes):
                for node in nodes where !node.evaluate(&reading, dataKeys: dataKeys) { return false }
                return true
            case .any(let nodes):
                for node in nodes where node.evaluate(&reading, dataKeys: dataKeys) { return true }
                return false
            case .not(let node):
                return !node.evaluate(&reading, dataKeys: dataKeys)
            }
        }
    }

    /// Where a term reads.
    private enum Field: Sendable {
        case id, type
        /// `data` itself: a hand-built ``FilterField/data(_:)`` without keys, which the grammar cannot write.
        case wholeData
        /// Inside `data`: the first key by its index in ``FilterMatcher/dataKeys``, the keys after it as bytes.
        case data(slot: Int, rest: [[UInt8]])
    }

    private struct Term: Sendable {
        let field: Field
        let test: Test
        /// Whether an item without the field passes (``FilterOp/matchesAbsentField``).
        let matchesAbsentField: Bool

        init(_ term: FilterTerm, dataKeys: inout [[UInt8]]) {
            switch term.field {
            case .id: field = .id
            case .type: field = .type
            case .data(let keys):
                let path = keys.map { Array($0.utf8) }
                guard let first = path.first else {
                    field = .wholeData
                    break
                }
                let slot = dataKeys.firstIndex(of: first) ?? dataKeys.count
                if slot == dataKeys.count { dataKeys.append(first) }
                field = .data(slot: slot, rest: Array(path.dropFirst()))
            }
            test = Test(term.op)
            matchesAbsentField = term.op.matchesAbsentField
        }

        func evaluate(_ reading: inout Reading, dataKeys: [[UInt8]]) -> Bool {
            guard let start = reading.start(of: field, dataKeys: dataKeys) else { return matchesAbsentField }
            if case .exists(let flag) = test { return flag }
            return reading.scanner.withScalar(at: start) { test.passes($0) }
        }
    }
}
