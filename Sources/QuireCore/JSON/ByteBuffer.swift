extension Array where Element == UInt8 {
    /// Appends the bytes of a literal in one copy (a `String`'s UTF-8 view would be appended byte by byte).
    ///
    /// - Complexity: O(*n*) in the literal's length.
    @inline(__always)
    public mutating func appendLiteral(_ literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
