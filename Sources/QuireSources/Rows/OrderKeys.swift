/// Where a row's item goes in its section: its values of the `order` columns, each ascending or descending, then
/// its primary key's parts, ascending, which make every key of a table distinct.
///
/// Keys compare as PostgreSQL's `ORDER BY <order>, <primary key> COLLATE "C"` orders the rows (``SortValue``). The
/// keys of one section all come from one ``RowMapping``, with the same columns and directions.
public struct ItemOrderKey: Sendable, Hashable, Comparable {
    let values: [SortValue]
    /// One flag per value: whether its comparison is reversed.
    let descending: [Bool]

    init(values: [SortValue], descending: [Bool]) {
        self.values = values
        self.descending = descending
    }

    public static func < (lhs: ItemOrderKey, rhs: ItemOrderKey) -> Bool {
        for index in 0..<min(lhs.values.count, rhs.values.count) {
            let order = SortValue.compare(lhs.values[index], rhs.values[index])
            if order != 0 { return lhs.descending[index] ? order > 0 : order < 0 }
        }
        return lhs.values.count < rhs.values.count
    }
}

/// Where a row's section goes among the sections of its list: its section value, ascending or descending
/// (`sectionOrder`), compared as ``SortValue`` compares.
public struct SectionOrderKey: Sendable, Hashable, Comparable {
    public let value: SortValue
    public let descending: Bool

    public init(value: SortValue, descending: Bool) {
        self.value = value
        self.descending = descending
    }

    public static func < (lhs: SectionOrderKey, rhs: SectionOrderKey) -> Bool {
        let order = SortValue.compare(lhs.value, rhs.value)
        return lhs.descending ? order > 0 : order < 0
    }
}

/// Positions by order keys.
public enum SourceOrder {
    /// The index at which `key` goes among `keys`, which are in ascending order: the number of keys less than it,
    /// so that it lands before any key equal to it (an item's key equals no other's: its primary key is in it).
    ///
    /// What the follower turns into an insert at that index of the section's items (or of the list's sections,
    /// with ``SectionOrderKey``).
    ///
    /// - Complexity: O(log *n*) comparisons.
    public static func insertionIndex<Keys: RandomAccessCollection>(
        of key: Keys.Element, in keys: Keys
    ) -> Int where Keys.Element: Comparable {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = low + (high - low) / 2
            if keys[keys.index(keys.startIndex, offsetBy: middle)] < key {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }
}
