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
