extension ListVersion {
    /// Checks, in debug builds and for lists up to a few thousand items, that the indexes agree with the
    /// trees: every section and item is indexed under its own label and container, and nothing else is.
    ///
    /// - Complexity: O(*n* log *n*) in debug builds; nothing in release builds.
    @inline(__always)
    func checkInvariants() {
        #if DEBUG
            guard itemIndex.count <= 2_000 else { return }
            precondition(sections.count == sectionIndex.count, "section index out of step")
            var itemsSeen = 0
            sections.forEach { label, section in
                precondition(sectionIndex.value(for: section.key) == label, "section indexed under another label")
                checkItems(section.items, container: section.key, isChild: false, seen: &itemsSeen)
                return true
            }
            precondition(itemsSeen == itemIndex.count, "item index holds items that are not in the list")
        #endif
    }

    #if DEBUG
        private func checkItems(
            _ items: PersistentTree<OrderLabel, ItemNode>, container: Int32, isChild: Bool, seen: inout Int
        ) {
            items.forEach { label, item in
                seen += 1
                guard let location = itemIndex.value(for: item.key) else { preconditionFailure("item not indexed") }
                precondition(
                    location.container == container && location.isChild == isChild && location.label == label,
                    "item indexed at another place")
                checkItems(item.children, container: item.key, isChild: true, seen: &seen)
                return true
            }
        }
    #endif
}
