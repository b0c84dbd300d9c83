import Testing

@testable import QuireHTTP

/// The deferred-response state machine, without sockets: every interleaving of the connection's thread
/// (attach, suspend, the call after resume, the end) and the resolving thread.
@Suite("Deferred response state machine")
struct DeferredStateMachineTests {
    let connection = ConnectionHandle(pointer: OpaquePointer(bitPattern: 0x1000)!)
    let answer = Response(status: 200, text: "answer")

    @Test("resolved before attach: queued at once, never suspended")
    func resolvedBeforeAttach() {
        var machine = DeferredStateMachine()
        #expect(machine.resolve(with: answer) == .accepted)
        #expect(machine.attach(to: connection) == .queue(answer))
        #expect(machine.resolve(with: answer) == .rejected)
        #expect(machine.takeResponse() == nil)
    }

    @Test("resolved while suspended: resumed once, the response taken once")
    func resolvedWhileSuspended() {
        var machine = DeferredStateMachine()
        #expect(machine.attach(to: connection) == .suspend)
        #expect(machine.didSuspend() == .none)
        #expect(!machine.isResolved)
        #expect(machine.resolve(with: answer) == .resumeConnection(connection))
        #expect(machine.resolve(with: Response(status: 500)) == .rejected)
        #expect(machine.takeResponse() == answer)
        #expect(machine.takeResponse() == nil)
    }

    @Test("resolved between attach and the end of the suspend: resumed by the connection's thread")
    func resolvedDuringSuspend() {
        var machine = DeferredStateMachine()
        #expect(machine.attach(to: connection) == .suspend)
        #expect(machine.resolve(with: answer) == .accepted)
        #expect(machine.didSuspend() == .resumeConnection(connection))
        #expect(machine.takeResponse() == answer)
    }

    @Test("after the request ended nothing touches the connection")
    func endedRequest() {
        var machine = DeferredStateMachine()
        #expect(machine.attach(to: connection) == .suspend)
        #expect(machine.didSuspend() == .none)
        #expect(machine.resolve(with: answer) == .resumeConnection(connection))
        machine.finish()  // the client went away before the response was taken
        #expect(machine.takeResponse() == nil)
        #expect(machine.resolve(with: answer) == .rejected)
    }

    @Test("a spurious access-handler call while suspended takes nothing")
    func spuriousCall() {
        var machine = DeferredStateMachine()
        #expect(machine.attach(to: connection) == .suspend)
        #expect(machine.didSuspend() == .none)
        #expect(machine.takeResponse() == nil)
        #expect(machine.resolve(with: answer) == .resumeConnection(connection))
    }
}

@Suite("HTTP headers")
struct HTTPHeadersTests {
    @Test("lookup ignores ASCII case only")
    func caseInsensitive() {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "X-A": "1"]
        headers.add("x-a", "2")
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.values(for: "X-a") == ["1", "2"])
        #expect(headers["Content-Typf"] == nil)
        #expect(headers["Content-Typ"] == nil)
        #expect(!HTTPHeaders.namesMatch("a-b", "a\u{0D}b"))
        // Bytes that differ by the case bit but are not letters stay different; long names and non-ASCII too.
        #expect(!HTTPHeaders.namesMatch("a[b", "a{b"))
        #expect(!HTTPHeaders.namesMatch("@", "`"))
        #expect(!HTTPHeaders.namesMatch("é", "É"))
        #expect(HTTPHeaders.namesMatch("é-Name", "é-nAME"))
        #expect(
            HTTPHeaders.namesMatch("X-A-Long-Header-Name-Past-Fifteen-Bytes", "x-a-long-header-name-past-fifteen-bytes")
        )
        #expect(
            !HTTPHeaders.namesMatch(
                "X-A-Long-Header-Name-Past-Fifteen-Bytes", "x-a-long-header-name-past-fifteen-byteS "))
        #expect(HTTPHeaders.namesMatch("", ""))
        headers.replace("X-A", with: "3")
        #expect(headers.values(for: "x-a") == ["3"])
        headers.remove("x-a")
        #expect(!headers.contains("X-A"))
    }
}
