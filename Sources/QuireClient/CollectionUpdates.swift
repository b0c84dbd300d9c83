import Foundation

/// The calls a collection view (or table view) receives when a session's window changes: what the UIKit
/// adapter forwards to `UICollectionView`, and what a test double checks on Linux.
@MainActor
public protocol BatchUpdatingView: AnyObject {
    /// Runs `updates` as one animated batch; the view reads the new counts from its data source after it.
    func performBatchUpdates(_ updates: () -> Void)
    func deleteSections(_ sections: [Int])
    func insertSections(_ sections: [Int])
    func moveSection(_ section: Int, toSection: Int)
    func deleteItems(at paths: [ItemPath])
    func insertItems(at paths: [ItemPath])
    func moveItem(at path: ItemPath, to newPath: ItemPath)
    /// Redraws the cells in place (iOS 15 `reconfigureItems`), after the batch.
    func reconfigureItems(at paths: [ItemPath])
    /// Redraws a section's header and footer.
    func reloadSupplementaryViews(inSection section: Int)
    func reloadData()
}

/// Applies a session's updates to a view: the data source's window is replaced inside the batch (where
/// UIKit reads the new counts), the structural changes go into one `performBatchUpdates`, then the
/// in-place updates (API.md §5 rule 6).
public struct BatchUpdater: Sendable {
    public init() {}

    /// - Parameter setWindow: replaces the data source's window (called once, inside the batch).
    @MainActor
    public func apply(
        _ update: SessionUpdate, to view: some BatchUpdatingView, setWindow: (ClientWindow) -> Void
    ) {
        switch update.change {
        case .reset:
            setWindow(update.window)
            view.reloadData()
        case .changes(let batch):
            view.performBatchUpdates {
                setWindow(update.window)
                if !batch.deleteSections.isEmpty { view.deleteSections(batch.deleteSections) }
                if !batch.insertSections.isEmpty { view.insertSections(batch.insertSections.map(\.index)) }
                for move in batch.moveSections { view.moveSection(move.from, toSection: move.to) }
                if !batch.deleteItems.isEmpty { view.deleteItems(at: batch.deleteItems.map(ItemPath.init)) }
                if !batch.insertItems.isEmpty { view.insertItems(at: batch.insertItems.map { ItemPath($0.at) }) }
                for move in batch.moveItems { view.moveItem(at: ItemPath(move.from), to: ItemPath(move.to)) }
            }
            if !batch.updateItems.isEmpty { view.reconfigureItems(at: batch.updateItems.map { ItemPath($0.at) }) }
            for section in batch.updateSections { view.reloadSupplementaryViews(inSection: section.index) }
        case .sequential:
            // One op at a time suits RecyclerView; a collection view takes the whole window at once.
            setWindow(update.window)
            view.reloadData()
        }
    }
}
