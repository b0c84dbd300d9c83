/// A position label: the key under which an item or a section is stored in its container's tree.
///
/// A label is a fraction `0.d₀d₁d₂…` in base 2³² that never ends with a zero digit; labels compare as
/// those fractions do. Between any two labels there is always room for more, so inserting or moving an
/// element relabels only that element: the id index stays valid for every other one, and an element's
/// position is its label's rank in the tree (O(log *n*)).
struct OrderLabel: Comparable, Hashable, Sendable {
    /// The first digit (kept inline: most labels have only this one).
    let head: UInt32
    /// Further digits, usually none.
    let tail: [UInt32]

    init(head: UInt32, tail: [UInt32] = []) {
        self.head = head
        self.tail = tail
    }

    init(digits: [UInt32]) {
        head = digits[0]
        tail = Array(digits.dropFirst())
    }

    var digitCount: Int { 1 + tail.count }

    func digit(_ index: Int) -> UInt32 { index == 0 ? head : tail[index - 1] }

    static func < (lhs: OrderLabel, rhs: OrderLabel) -> Bool {
        if lhs.head != rhs.head { return lhs.head < rhs.head }
        return lhs.tail.lexicographicallyPrecedes(rhs.tail)
    }

    /// The widest step between labels of consecutive elements built at once.
    private static let maximumStep: UInt64 = 1 << 20
    /// The step used next to an open end (before the first or after the last element).
    private static let openEndStep: UInt64 = 1 << 16

    /// Labels for `count` elements built at once, leaving half the space free for later appends.
    ///
    /// - Complexity: O(*count*).
    static func initial(count: Int) -> [OrderLabel] {
        let step = max(1, min(maximumStep, (UInt64(1) << 31) / UInt64(count + 1)))
        return (0..<count).map { OrderLabel(head: UInt32(step * UInt64($0 + 1))) }
    }

    /// `count` increasing labels strictly between `low` and `high` (`nil` = the open end).
    ///
    /// - Complexity: O(*count* + digits of the bounds).
    static func between(_ low: OrderLabel?, _ high: OrderLabel?, count: Int) -> [OrderLabel] {
        precondition(low == nil || high == nil || low! < high!, "bounds out of order")
        guard count > 0 else { return [] }
        var prefix: [UInt32] = []
        var highBounded = high != nil
        var position = 0
        while true {
            let lowDigit: UInt64 = low.map { position < $0.digitCount ? UInt64($0.digit(position)) : 0 } ?? 0
            let highDigit: UInt64 = highBounded ? UInt64(high!.digit(position)) : 1 << 32
            if highDigit > lowDigit, highDigit - lowDigit - 1 >= UInt64(count) {
                var step = (highDigit - lowDigit) / UInt64(count + 1)
                let nearHigh = low == nil && highBounded
                if nearHigh || !highBounded { step = min(step, openEndStep) }
                var labels: [OrderLabel] = []
                labels.reserveCapacity(count)
                for index in 0..<count {
                    let digit = UInt32(
                        nearHigh ? highDigit - step * UInt64(count - index) : lowDigit + step * UInt64(index + 1))
                    // Built in place: most labels have one digit and no tail to allocate (a write's labels are made
                    // on every insert and move).
                    if prefix.isEmpty {
                        labels.append(OrderLabel(head: digit))
                    } else {
                        var tail: [UInt32] = []
                        tail.reserveCapacity(prefix.count)
                        tail.append(contentsOf: prefix.dropFirst())
                        tail.append(digit)
                        labels.append(OrderLabel(head: prefix[0], tail: tail))
                    }
                }
                return labels
            }
            prefix.append(UInt32(lowDigit))
            if highDigit > lowDigit { highBounded = false }
            position += 1
        }
    }
}

extension OrderLabel: TreeValue {
    var treeWeight: Int { 0 }
}
