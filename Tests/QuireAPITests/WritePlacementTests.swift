import Dispatch
import Logging
import QuireCore
import QuireHTTP
import Synchronization
import Testing

@testable import QuireAPI

/// Where a write runs, decided without a server: the placement of each kind of store and write, and the
/// scheduler following it as the other writes under way allow.
@Suite("Where a write runs") struct WritePlacementTests {
    @Test("each kind of store places its writes and deletes where they wait on the least")
    func placementOfEachStore() {
        #expect(WritePlacement.write(in: .answersAtOnce) == .here)
        #expect(WritePlacement.write(in: .syncsLocally) == .hereWhenAlone(otherwise: .batchWriter))
        #expect(WritePlacement.write(in: .remote) == .lane)
        #expect(WritePlacement.delete(in: .answersAtOnce) == .here)
        #expect(WritePlacement.delete(in: .syncsLocally) == .hereWhenAlone(otherwise: .lane))
        #expect(WritePlacement.delete(in: .remote) == .lane)
        for kind in StoreKind.allCases {
            #expect(
                WritePlacement.delete(in: kind).place(aloneGranted: false) != .batchWriter, "a delete is not batched")
        }
    }

    @Test("a placement that waits for the thread to be free goes elsewhere when it is not", arguments: [true, false])
    func placeOnceTheThreadIsKnown(aloneGranted: Bool) {
        #expect(WritePlacement.here.place(aloneGranted: aloneGranted) == .here)
        #expect(WritePlacement.lane.place(aloneGranted: aloneGranted) == .lane)
        #expect(
            WritePlacement.write(in: .syncsLocally).place(aloneGranted: aloneGranted)
                == (aloneGranted ? .here : .batchWriter))
        #expect(
            WritePlacement.delete(in: .syncsLocally).place(aloneGranted: aloneGranted) == (aloneGranted ? .here : .lane)
        )
    }

    @Test("the scheduler makes a write here when nothing else is under way, elsewhere while a lane works")
    func schedulerFollowsThePlacement() throws {
        let scheduler = WriteScheduler(aloneLimit: .seconds(3600))
        let write = WritePlacement.write(in: .syncsLocally)
        let delete = WritePlacement.delete(in: .syncsLocally)
        #expect(scheduler.run(RecordedWrite(), at: write) == .here)
        #expect(scheduler.run(RecordedWrite(), at: delete) == .here)
        #expect(scheduler.run(RecordedWrite(), at: .lane) == .lane)

        // A write on a lane: the next ones are not made on the receiving thread, but for those placed `here`.
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        _ = scheduler.deferred(list: "busy") {
            release.wait()
            done.signal()
            return Response(status: 200)
        }
        #expect(scheduler.run(RecordedWrite(), at: write) == .batchWriter)
        #expect(scheduler.run(RecordedWrite(), at: delete) == .lane)
        #expect(scheduler.run(RecordedWrite(), at: WritePlacement.delete(in: .answersAtOnce)) == .here)
        release.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        scheduler.waitUntilIdle()
        #expect(scheduler.run(RecordedWrite(), at: write) == .here)

        // Shutting down: nothing is made, wherever it was placed.
        scheduler.stopTakingWrites()
        #expect(scheduler.run(RecordedWrite(), at: write) == .refused)
        #expect(scheduler.run(RecordedWrite(), at: .here) == .refused)
    }

    @Test("a producer that is not a connection gets each write's outcome as a value, through the same placement")
    func producerGetsTheOutcome() throws {
        let registry = ListRegistry(store: InMemoryListStore(), limits: ListLimits())
        let writes = ListWrites(registry: registry, logger: Logger(label: "test"))
        #expect(writes.writePlacement == .here)
        let body = try JSONParser().parse(#"{"sections":[{"id":"s","items":[]}]}"#)

        let created = try writes.commit(ListRegistry.QueuedWrite("fed", write: .replace(body))).get()
        #expect(created.created)
        #expect(created.version.version == 1)
        switch writes.commit(ListRegistry.QueuedWrite("fed", ifMatch: [99], write: .replace(body))) {
        case .failure(.versionMismatch(let current)): #expect(current == 1)
        default: Issue.record("a write naming another version is refused")
        }
        switch writes.commit(ListRegistry.QueuedWrite("absent", mustExist: true, write: .replace(body))) {
        case .failure(.listNotFound): break
        default: Issue.record("a write that must find its list is refused when it does not exist")
        }

        writes.stopTakingWrites()
        switch writes.commit(ListRegistry.QueuedWrite("fed", write: .replace(body))) {
        case .failure(.storage): break
        default: Issue.record("a write once the service is shutting down is not made")
        }
        #expect(registry.version(of: "fed")?.version == 1)
    }
}

/// A write that records where the scheduler ran it, and makes nothing.
private struct RecordedWrite: PlacedWrite {
    enum Place: Equatable { case here, batchWriter, lane, refused }
    typealias Failure = Never

    func madeHere() -> Place { .here }
    func handedToBatchWriter(of scheduler: WriteScheduler) -> Place { .batchWriter }
    func handedToLane(of scheduler: WriteScheduler) -> Place { .lane }
    func refused() -> Place { .refused }
}
