/// What a list held in memory costs, in bytes: what the registry's memory budget counts.
///
/// Measured by walking the version (``ListVersion/estimatedFootprint(of:)``: every node and buffer, with the
/// allocator's rounding) plus its id table, when the list is loaded or created. A write does not walk the list
/// again: the bytes follow the list's size in proportion to the last measurement, and the list is measured again
/// once its size has doubled or halved since, so that the walks cost O(1) per item written, amortized.
public struct ListFootprint: Sendable, Equatable {
    /// The estimated bytes.
    public let bytes: Int
    /// The list's size (``units(of:)``) when it was last measured, and its bytes then.
    private let measuredUnits: Int
    private let measuredBytes: Int

    /// Measures `version`.
    ///
    /// - Complexity: O(*n*) for *n* items and sections.
    public init(measuring version: ListVersion) {
        let bytes = ListVersion.estimatedFootprint(of: [version]) + version.interner.estimatedBytes
        self.bytes = bytes
        measuredUnits = Self.units(of: version)
        measuredBytes = bytes
    }

    private init(bytes: Int, measuredUnits: Int, measuredBytes: Int) {
        self.bytes = bytes
        self.measuredUnits = measuredUnits
        self.measuredBytes = measuredBytes
    }

    /// The footprint of `next`, a later version of the same list, in proportion to this one's measurement; `nil`
    /// when the list's size moved too far from it (measure `next` then).
    ///
    /// - Complexity: O(1).
    public func following(_ next: ListVersion) -> ListFootprint? {
        let units = Self.units(of: next)
        guard units <= 2 * measuredUnits, 2 * units >= measuredUnits else { return nil }
        return ListFootprint(
            bytes: measuredBytes * units / measuredUnits, measuredUnits: measuredUnits, measuredBytes: measuredBytes)
    }

    /// Items and sections, and one for the list itself (never 0).
    private static func units(of version: ListVersion) -> Int {
        version.itemCount + version.sectionCount + 1
    }
}
