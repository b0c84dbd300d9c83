import Testing

@testable import QuireCore

struct Weighted: TreeValue, Equatable {
    let value: Int
    var treeWeight: Int { value % 3 }
}

@Suite("Persistent tree")
struct PersistentTreeTests {
    /// Random inserts and removes against a sorted array; old trees keep their content.
    @Test func matchesASortedArray() {
        var random = SeededGenerator(seed: 11)
        var tree = PersistentTree<Int, Weighted>()
        var reference: [(Int, Int)] = []
        var snapshots: [(PersistentTree<Int, Weighted>, [(Int, Int)])] = []
        for step in 0..<6_000 {
            let key = Int.random(in: 0..<3_000, using: &random)
            if Bool.random(using: &random) || reference.count < 50 {
                tree.insert(Weighted(value: step), for: key)
                if let index = reference.firstIndex(where: { $0.0 == key }) {
                    reference[index].1 = step
                } else {
                    reference.append((key, step))
                    reference.sort { $0.0 < $1.0 }
                }
            } else {
                let removed = tree.remove(key)
                let index = reference.firstIndex(where: { $0.0 == key })
                #expect((removed == nil) == (index == nil))
                if let index { reference.remove(at: index) }
            }
            if step % 500 == 0 { snapshots.append((tree, reference)) }
        }
        for (snapshot, expected) in snapshots + [(tree, reference)] {
            #expect(snapshot.count == expected.count)
            #expect(snapshot.values.map(\.value) == expected.map(\.1))
            for _ in 0..<50 where !expected.isEmpty {
                let index = Int.random(in: 0..<expected.count, using: &random)
                #expect(snapshot.rank(of: expected[index].0) == index)
                #expect(snapshot.element(at: index).key == expected[index].0)
                #expect(snapshot.value(for: expected[index].0)?.value == expected[index].1)
                #expect(snapshot.weight(before: index) == expected[..<index].reduce(0) { $0 + $1.1 % 3 })
                var visited: [Int] = []
                snapshot.forEach(from: index) { key, _ in
                    visited.append(key)
                    return visited.count < 5
                }
                #expect(visited == expected[index...].prefix(5).map(\.0))
            }
        }
    }

    @Test func bulkBuildEqualsInserts() {
        let keys = Array(0..<1_000)
        let built = PersistentTree(sortedElements: keys, keys.map { Weighted(value: $0) })
        #expect(built.count == 1_000)
        #expect(built.rank(of: 777) == 777)
        #expect(built.weight == keys.reduce(0) { $0 + $1 % 3 })
    }

    @Test func labelsFitBetweenAnyTwo() {
        var labels = OrderLabel.initial(count: 3)
        var random = SeededGenerator(seed: 3)
        for _ in 0..<2_000 {
            let index = Int.random(in: 0...labels.count, using: &random)
            let low = index > 0 ? labels[index - 1] : nil
            let high = index < labels.count ? labels[index] : nil
            let count = Int.random(in: 1...3, using: &random)
            let new = OrderLabel.between(low, high, count: count)
            #expect(new.count == count)
            for (offset, label) in new.enumerated() {
                if let low { #expect(low < label) }
                if let high { #expect(label < high) }
                if offset > 0 { #expect(new[offset - 1] < label) }
            }
            labels.insert(contentsOf: new, at: index)
        }
        #expect(labels.max { $0.digitCount < $1.digitCount }!.digitCount < 40)
    }
}
