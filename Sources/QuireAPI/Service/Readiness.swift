import Synchronization

/// Whether the service accepts work: `/readyz` answers `200` only while ``State-swift.enum/ready``.
public final class Readiness: Sendable {
    public enum State: UInt8, Sendable {
        /// Storage is opening or lists are loading.
        case starting
        /// Storage is open and the server accepts work.
        case ready
        /// Shutting down: in-flight requests finish, new work is refused.
        case draining
    }

    private let value: Atomic<UInt8>

    public init(_ state: State = .starting) {
        value = Atomic(state.rawValue)
    }

    public var state: State {
        State(rawValue: value.load(ordering: .acquiring)) ?? .starting
    }

    public func set(_ state: State) {
        value.store(state.rawValue, ordering: .releasing)
    }
}
