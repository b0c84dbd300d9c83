/// Marks one longest strictly increasing subsequence of `values`.
///
/// - Returns: `mask[i]` is `true` when `values[i]` is in the subsequence.
/// - Complexity: O(*n* log *n*).
func longestIncreasingSubsequenceMask<Value: BinaryInteger>(_ values: [Value]) -> [Bool] {
    var mask = [Bool](repeating: false, count: values.count)
    guard !values.isEmpty else { return mask }
    // tails[k]: index of the smallest tail of an increasing run of length k + 1; previous: back links.
    var tails = [Int32](repeating: 0, count: values.count)
    var previous = [Int32](repeating: -1, count: values.count)
    var length = 0
    values.withUnsafeBufferPointer { values in
        tails.withUnsafeMutableBufferPointer { tails in
            previous.withUnsafeMutableBufferPointer { previous in
                for index in values.indices {
                    let value = values[index]
                    if length > 0, values[Int(tails[length - 1])] < value {
                        previous[index] = tails[length - 1]
                        tails[length] = Int32(index)
                        length += 1
                        continue
                    }
                    var low = 0
                    var high = length
                    while low < high {
                        let middle = (low + high) >> 1
                        if values[Int(tails[middle])] < value { low = middle + 1 } else { high = middle }
                    }
                    if low > 0 { previous[index] = tails[low - 1] }
                    tails[low] = Int32(index)
                    if low == length { length += 1 }
                }
            }
        }
    }
    var cursor = Int(tails[length - 1])
    while cursor >= 0 {
        mask[cursor] = true
        cursor = Int(previous[cursor])
    }
    return mask
}

/// Positions of interned keys: a flat array when the keys are dense enough, a dictionary otherwise.
struct KeyPositions {
    private var dense: [Int32]
    private var sparse: [Int32: Int32]
    private let isDense: Bool

    init(maximumKey: Int32, expectedCount: Int) {
        isDense = Int(maximumKey) <= 4 * expectedCount + 4096
        dense = isDense ? [Int32](repeating: -1, count: Int(maximumKey) + 1) : []
        sparse = isDense ? [:] : Dictionary(minimumCapacity: expectedCount)
    }

    /// The position stored for `key`, or -1.
    subscript(key: Int32) -> Int32 {
        get {
            if isDense { return Int(key) < dense.count ? dense[Int(key)] : -1 }
            return sparse[key] ?? -1
        }
        set {
            if isDense { dense[Int(key)] = newValue } else { sparse[key] = newValue }
        }
    }
}

/// One element of a compressed sequence: `weight` consecutive values that increase from `low` to `high`.
struct IncreasingRun {
    let low: Int
    let high: Int
    let weight: Int
}

/// Marks the runs that ``longestIncreasingSubsequenceMask(_:)`` would keep if each run were written out
/// value by value, without writing them out.
///
/// Holds when no value of another element lies strictly between a run's `low` and `high`, and a run's
/// values are all below those of every run after it (untouched stretches of a window: contiguous in both
/// orders, and kept in order by every write). Then a longest subsequence takes each run whole or not at
/// all, and the patience algorithm's choice — the latest element of each length, linked to the latest
/// element one shorter — is made at run granularity. A run the expanded sequence would cut in the middle
/// can only come from input that breaks the precondition; it is reported through `nil`.
///
/// - Returns: `mask[i]` for every run, or `nil` when the precondition does not hold.
/// - Complexity: O(*m* log *m*) for *m* runs.
func longestIncreasingSubsequenceMask(runs: [IncreasingRun]) -> [Bool]? {
    guard !runs.isEmpty else { return [] }
    // endLength[i]: the longest increasing subsequence (weighted) ending with run i, taken whole.
    let highs = Array(Set(runs.map(\.high))).sorted()
    var best = [Int](repeating: 0, count: highs.count + 1)  // Fenwick tree of prefix maxima over highs
    var endLength = [Int](repeating: 0, count: runs.count)
    for (index, run) in runs.enumerated() {
        // Longest subsequence among earlier runs whose high is below this run's low.
        var below = lowerBound(highs, run.low)
        var longest = 0
        while below > 0 {
            longest = max(longest, best[below])
            below -= below & -below
        }
        endLength[index] = longest + run.weight
        var slot = lowerBound(highs, run.high) + 1
        while slot < best.count {
            best[slot] = max(best[slot], endLength[index])
            slot += slot & -slot
        }
    }
    var mask = [Bool](repeating: false, count: runs.count)
    let length = endLength.max()!
    var cursor = endLength.lastIndex(of: length)!
    while true {
        mask[cursor] = true
        let target = endLength[cursor] - runs[cursor].weight
        if target == 0 { break }
        var previous = cursor - 1
        while previous >= 0 && endLength[previous] != target {
            // An element of the expanded sequence inside a run would be the latest of this length.
            if endLength[previous] > target && endLength[previous] - runs[previous].weight < target { return nil }
            previous -= 1
        }
        guard previous >= 0, runs[previous].high < runs[cursor].low else { return nil }
        cursor = previous
    }
    return mask
}

/// Index of the first element of the sorted `values` not less than `value`.
private func lowerBound(_ values: [Int], _ value: Int) -> Int {
    var low = 0
    var high = values.count
    while low < high {
        let middle = (low + high) >> 1
        if values[middle] < value { low = middle + 1 } else { high = middle }
    }
    return low
}
