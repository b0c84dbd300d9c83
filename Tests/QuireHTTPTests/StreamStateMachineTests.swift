import Testing

@testable import QuireHTTP

/// The streaming connection's state machine, without sockets: wakes that arrive while the producer runs,
/// while the connection is being suspended, while it is suspended, and after the end.
@Suite("Stream state machine")
struct StreamStateMachineTests {
    let connection = ConnectionHandle(pointer: OpaquePointer(bitPattern: 0x2000)!)

    @Test("nothing to send: suspended; a wake resumes it once")
    func suspendThenWake() {
        var machine = StreamStateMachine()
        machine.attach(to: connection)
        #expect(machine.willProduce() == connection)
        #expect(machine.willWait() == .suspend(connection))
        #expect(machine.didSuspend() == nil)
        #expect(machine.wake() == .resume(connection))
        #expect(machine.wake() == .none)  // already running: the producer is asked again instead
        #expect(machine.willProduce() == connection)
    }

    @Test("a wake while the producer runs is not lost: it is asked again instead of suspending")
    func wakeWhileProducing() {
        var machine = StreamStateMachine()
        machine.attach(to: connection)
        #expect(machine.willProduce() == connection)
        #expect(machine.wake() == .none)
        #expect(machine.willWait() == .produceAgain)
        #expect(machine.willProduce() == connection)
        #expect(machine.willWait() == .suspend(connection))
    }

    @Test("a wake while suspending: resumed right after the suspension")
    func wakeWhileSuspending() {
        var machine = StreamStateMachine()
        machine.attach(to: connection)
        _ = machine.willProduce()
        #expect(machine.willWait() == .suspend(connection))
        #expect(machine.wake() == .none)
        #expect(machine.didSuspend() == connection)
        #expect(machine.state == .running(connection))
    }

    @Test("finishing: the producer is not asked again; after the end nothing is resumed")
    func finishAndEnd() {
        var machine = StreamStateMachine()
        machine.attach(to: connection)
        _ = machine.willProduce()
        _ = machine.willWait()
        _ = machine.didSuspend()
        machine.finish()
        #expect(machine.wake() == .resume(connection))
        #expect(machine.willProduce() == nil)
        #expect(machine.willWait() == .end)
        machine.end()
        #expect(machine.wake() == .none)
        #expect(machine.isEnded)
    }
}
