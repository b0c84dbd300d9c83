#if canImport(UIKit)
    public import UIKit

    // The UIKit side of ``BatchUpdatingView``: a collection view receives a session's updates as one
    // `performBatchUpdates` and then `reconfigureItems` (iOS 15+). Not compiled on Linux: the protocol's use is
    // tested there with a test double that enforces UIKit's batch consistency rules.

    extension ItemPath {
        /// The path as UIKit's `IndexPath` (`item`, `section`).
        public var indexPath: IndexPath { IndexPath(item: item, section: section) }
    }

    /// A collection view takes a session's updates straight from ``BatchUpdater``: each call forwards to its
    /// `UICollectionView` counterpart, index paths as `IndexPath`.
    extension UICollectionView: BatchUpdatingView {
        /// `performBatchUpdates(_:completion:)` without a completion.
        public func performBatchUpdates(_ updates: () -> Void) {
            withoutActuallyEscaping(updates) { updates in performBatchUpdates(updates, completion: nil) }
        }

        /// `deleteSections(_:)` with an `IndexSet`.
        public func deleteSections(_ sections: [Int]) { deleteSections(IndexSet(sections)) }
        /// `insertSections(_:)` with an `IndexSet`.
        public func insertSections(_ sections: [Int]) { insertSections(IndexSet(sections)) }
        /// `deleteItems(at:)` with `IndexPath`s.
        public func deleteItems(at paths: [ItemPath]) { deleteItems(at: paths.map(\.indexPath)) }
        /// `insertItems(at:)` with `IndexPath`s.
        public func insertItems(at paths: [ItemPath]) { insertItems(at: paths.map(\.indexPath)) }
        /// `moveItem(at:to:)` with `IndexPath`s.
        public func moveItem(at path: ItemPath, to newPath: ItemPath) {
            moveItem(at: path.indexPath, to: newPath.indexPath)
        }
        /// `reconfigureItems(at:)` (iOS 15) with `IndexPath`s.
        public func reconfigureItems(at paths: [ItemPath]) { reconfigureItems(at: paths.map(\.indexPath)) }

        /// Invalidates the layout of the section's header and footer
        /// (`elementKindSectionHeader`, `elementKindSectionFooter`), which the layout then asks for again.
        public func reloadSupplementaryViews(inSection section: Int) {
            let context = UICollectionViewLayoutInvalidationContext()
            for kind in [UICollectionView.elementKindSectionHeader, UICollectionView.elementKindSectionFooter] {
                context.invalidateSupplementaryElements(ofKind: kind, at: [IndexPath(item: 0, section: section)])
            }
            collectionViewLayout.invalidateLayout(with: context)
        }
    }

    extension ClientWindow {
        /// The window as a diffable data source snapshot: sections and items by id.
        public var snapshot: NSDiffableDataSourceSnapshot<String, String> {
            var snapshot = NSDiffableDataSourceSnapshot<String, String>()
            for section in sections {
                snapshot.appendSections([section.id])
                snapshot.appendItems(section.items.compactMap { $0["id"]?.stringValue }, toSection: section.id)
            }
            return snapshot
        }
    }

    extension UICollectionViewDiffableDataSource where SectionIdentifierType == String, ItemIdentifierType == String {
        /// Applies a session update: the new window's snapshot, with the updated items reconfigured.
        @MainActor
        public func apply(_ update: SessionUpdate, animatingDifferences: Bool = true) {
            var snapshot = update.window.snapshot
            if case .changes(let batch) = update.change {
                let ids = batch.updateItems.compactMap { $0.item["id"]?.stringValue }
                snapshot.reconfigureItems(ids.filter { snapshot.indexOfItem($0) != nil })
            }
            apply(snapshot, animatingDifferences: animatingDifferences && update.change.isIncremental)
        }
    }

    extension SessionUpdate.Change {
        var isIncremental: Bool {
            if case .reset = self { return false }
            return true
        }
    }
#endif
