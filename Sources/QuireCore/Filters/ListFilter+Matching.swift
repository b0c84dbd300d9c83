extension ListFilter {
    /// Whether `item` belongs to the filtered list (API.md §4d).
    ///
    /// Prepares a ``FilterMatcher`` on every call, which is right for one item (a write's changed item against the
    /// views it may enter). To match many items against one filter, as building a view does, prepare the matcher
    /// once and call its ``FilterMatcher/matches(_:)``.
    ///
    /// - Complexity: O(*f*) in the size of the filter to prepare it, plus ``FilterMatcher/matches(_:)``.
    public func matches(_ item: FilterItem) -> Bool {
        FilterMatcher(self).matches(item)
    }
}
