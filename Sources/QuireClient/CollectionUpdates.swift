import Foundation

/// The calls a collection view (or table view) receives when a session's window changes: what the UIKit
/// adapter forwards to `UICollectionView`, and what a test double checks on Linux.
///
/// On platforms with UIKit, `UICollectionView` conforms (QuireClient's UIKit adapter): hand one to
/// ``BatchUpdater/apply(_:to:setWindow:)``. Conform another view (a table view, a test double) by forwarding
/// each call to its counterpart. Index paths are ``ItemPath`` values.
@MainActor
public protocol BatchUpdatingView: AnyObject {
    /// Runs `updates` as one animated batch; the view reads the new counts from its data source after it.
    func performBatchUpdates(_ updates: () -> Void)
    /// Deletes sections, by their indexes before the batch.
    func deleteSections(_ sections: [Int])
    /// Inserts sections, at their indexes after the batch.
    func insertSections(_ sections: [Int])
    /// Moves a section from its index before the batch to its index after it.
    func moveSection(_ section: Int, toSection: Int)
    /// Deletes items, by their paths before the batch.
    func deleteItems(at paths: [ItemPath])
    /// Inserts items, at their paths after the batch.
    func insertItems(at paths: [ItemPath])
    /// Moves an item from its path before the batch to its path after it.
    func moveItem(at path: ItemPath, to newPath: ItemPath)
    /// Redraws the cells in place (iOS 15 `reconfigureItems`), after the batch.
    func reconfigureItems(at paths: [ItemPath])
    /// Redraws a section's header and footer.
    func reloadSupplementaryViews(inSection section: Int)
    /// Drops every cell and reads the data source again (a `.reset` or a `.sequential` update).
    func reloadData()
}

/// Applies a session's updates to a view: the data source's window is replaced inside the batch (where
/// UIKit reads the new counts), the structural changes go into one `performBatchUpdates`, then the
/// in-place updates (the batch rules of app-developers.md, "Change formats").
///
/// ```swift
/// Task { @MainActor in
///     for await update in session.updates {
///         BatchUpdater().apply(update, to: collectionView) { dataSource.window = $0 }
///     }
/// }
/// ```
public struct BatchUpdater: Sendable {
    /// An updater; it holds no state, so one can serve every view.
    public init() {}

    /// Applies one update to `view`: a `.changes` batch as one `performBatchUpdates` (then
    /// `reconfigureItems` and the headers and footers that changed), a `.reset` or a `.sequential` update as
    /// `reloadData`.
    ///
    /// Apply every update of ``QuireSession/updates`` in order, none skipped: a batch's indexes are relative to
    /// the window of the update before it.
    ///
    /// - Parameters:
    ///   - update: the session's update.
    ///   - view: the view that shows the session's window.
    ///   - setWindow: replaces the data source's window (called once, inside the batch).
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
