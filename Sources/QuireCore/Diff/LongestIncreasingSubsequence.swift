/// Marks one longest strictly increasing subsequence of `values`.
///
/// - Returns: `mask[i]` is `true` when `values[i]` is in the subsequence.
/// - Complexity: O(*n* log *n*).
func longestIncreasingSubsequenceMask(_ values: [Int]) -> [Bool] {
    var mask = [Bool](repeating: false, count: values.count)
    guard !values.isEmpty else { return mask }
    // tails[k]: index of the smallest tail of an increasing run of length k + 1.
    var tails: [Int] = []
    tails.reserveCapacity(64)
    var previous = [Int](repeating: -1, count: values.count)
    for (index, value) in values.enumerated() {
        if let last = tails.last, values[last] < value {
            previous[index] = last
            tails.append(index)
            continue
        }
        var low = 0
        var high = tails.count
        while low < high {
            let middle = (low + high) >> 1
            if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
        }
        if low > 0 { previous[index] = tails[low - 1] }
        if low == tails.count { tails.append(index) } else { tails[low] = index }
    }
    var cursor = tails[tails.count - 1]
    while cursor >= 0 {
        mask[cursor] = true
        cursor = previous[cursor]
    }
    return mask
}

/// Positions of interned keys: a flat array when the keys are dense enough, a dictionary otherwise.
struct KeyPositions {
    private var dense: [Int64]
    private var sparse: [Int32: Int64]
    private let isDense: Bool

    init(maximumKey: Int32, expectedCount: Int) {
        isDense = Int(maximumKey) <= 4 * expectedCount + 4096
        dense = isDense ? [Int64](repeating: -1, count: Int(maximumKey) + 1) : []
        sparse = isDense ? [:] : Dictionary(minimumCapacity: expectedCount)
    }

    /// The position stored for `key`, or -1.
    subscript(key: Int32) -> Int64 {
        get {
            if isDense { return Int(key) < dense.count ? dense[Int(key)] : -1 }
            return sparse[key] ?? -1
        }
        set {
            if isDense { dense[Int(key)] = newValue } else { sparse[key] = newValue }
        }
    }
}
