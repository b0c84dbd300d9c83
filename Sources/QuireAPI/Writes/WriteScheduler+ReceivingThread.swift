import Dispatch
import QuireHTTP
import Synchronization

/// Writes made on the thread that received them (libmicrohttpd's, or a producer's own).
extension WriteScheduler {
    /// The answer of `made`, made at once on the calling thread when no other write is queued or running and no
    /// write made so was slow lately (``aloneLimit``); `nil` otherwise (the caller hands it to the writer of batches,
    /// ``together(_:in:answer:)``, or to its lane). For a store that waits only on this machine's disk
    /// (``ListStore/syncsLocally``): a lone producer's write then waits on its sync and nothing else, where a lane
    /// would cost two thread wake-ups, a large share of a lone write's time. At most one write at a time is made so,
    /// so at most one of libmicrohttpd's threads waits on the disk, for one commit (the lanes exist so that a store
    /// that stops answering holds up no connection but its writes'); once a busy producer overlaps its writes, they
    /// all go to the writer and share syncs (group commit).
    ///
    /// - Parameter refused: the answer of a write not made, the service shutting down.
    func alone<Answer, Failure: Error>(refused: () -> Answer, _ made: () throws(Failure) -> Answer)
        throws(Failure) -> Answer?
    {
        guard offThread.load(ordering: .relaxed) == 0,
            DispatchTime.now().uptimeNanoseconds >= aloneBarredUntil.load(ordering: .relaxed),
            aloneUnderWay.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        else { return nil }
        defer { aloneUnderWay.store(false, ordering: .releasing) }
        let started = DispatchTime.now().uptimeNanoseconds
        defer {
            let ended = DispatchTime.now().uptimeNanoseconds
            let took = ended - started
            if took > aloneLimit {
                let bar = took.multipliedReportingOverflow(by: Self.aloneBarFactor)
                aloneBarredUntil.store(
                    ended + (bar.overflow ? aloneBar : min(aloneBar, bar.partialValue)), ordering: .relaxed)
            }
        }
        return try immediate(refused: refused, made)
    }

    /// The answer of `made`, made at once on the calling thread: for a store that answers every call at once
    /// (``ListStore/answersAtOnce``, the in-memory store), where a write waits on nothing but its list's lock, held
    /// briefly by another write. Handing such a write to a lane and the answer back would cost thread wake-ups and
    /// a suspended connection resumed, more than the write itself. Refused as on a lane once the service is
    /// shutting down (`refused` is the answer then), and waited for by ``waitUntilIdle()`` as well.
    func immediate<Answer, Failure: Error>(refused: () -> Answer, _ made: () throws(Failure) -> Answer)
        throws(Failure) -> Answer
    {
        running.enter()
        defer { running.leave() }
        if isRefusing { return refused() }
        return try made()
    }
}
