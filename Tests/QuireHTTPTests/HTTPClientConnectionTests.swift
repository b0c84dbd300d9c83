import Glibc
import QuireHTTP
import QuireTesting
import Synchronization
import Testing

/// The test client owns exactly one socket: a failed connect must not close a descriptor twice, or the
/// second close hits whatever another thread opened under that number in between (a server's socket,
/// a database file), in the tests or in `quire health`.
@Suite("HTTP client connection")
struct HTTPClientConnectionTests {
    @Test("a refused connect closes its own socket once, never a descriptor another thread opened")
    func refusedConnectClosesOnce() throws {
        let port = try Self.closedPort()
        let stop = Atomic<Bool>(false)
        let lostDescriptors = Atomic<Int>(0)
        let opener = DetachedThread.startJoinable {
            // Opens and checks descriptors as fast as it can: they get the lowest free numbers, the ones
            // the refused sockets just gave back, so a second close of such a number closes one of these.
            while !stop.load(ordering: .relaxed) {
                let descriptor = open("/dev/null", O_RDONLY)
                guard descriptor >= 0 else { continue }
                for _ in 0..<50 where fcntl(descriptor, F_GETFD) == -1 {
                    lostDescriptors.add(1, ordering: .relaxed)
                    break
                }
                if close(descriptor) != 0 { lostDescriptors.add(1, ordering: .relaxed) }
            }
        }
        for _ in 0..<10_000 {
            #expect(throws: HTTPClientError.self) {
                _ = try HTTPClientConnection(host: "127.0.0.1", port: port, timeoutSeconds: 1)
            }
        }
        stop.store(true, ordering: .relaxed)
        opener.join()
        #expect(lostDescriptors.load(ordering: .relaxed) == 0)
    }

    /// A loopback port nothing listens on: bound, then released.
    static func closedPort() throws -> Int {
        let server = try TestServer(responder: Responders.echo)
        let port = server.port
        server.stop()
        return port
    }
}
