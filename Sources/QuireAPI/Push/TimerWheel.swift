/// Elements each due at a tick of a ticker, kept in a ring of slots, one a tick: a tick takes the elements of its
/// slot alone, so what a tick costs is what is due then, not what is held. Elements due further than the ring
/// reaches are put in its farthest slot, and scheduled again by whoever takes them (the heartbeat's walk of
/// ``EventStreams``: an idle stream is looked at once a heartbeat, not once a tick).
struct TimerWheel<Element> {
    private var slots: [[Element]]
    private var cursor = 0
    /// Elements held (scheduled, not yet taken).
    private(set) var count = 0

    /// - Parameter reach: the most ticks ahead an element may be scheduled (at least 1).
    init(reach: Int) {
        slots = Array(repeating: [], count: max(reach, 1) + 1)
    }

    /// The most ticks ahead an element may be scheduled.
    var reach: Int { slots.count - 1 }

    /// Schedules `element` `ticks` ticks from now (clamped to 1…``reach``): the `ticks`-th call of ``advance()`` from
    /// now returns it.
    ///
    /// - Complexity: O(1) amortized.
    mutating func schedule(_ element: Element, inTicks ticks: Int) {
        let slot = (cursor + min(max(ticks, 1), reach)) % slots.count
        slots[slot].append(element)
        count += 1
    }

    /// Moves to the next tick and returns the elements due at it.
    ///
    /// - Complexity: O(elements due).
    mutating func advance() -> [Element] {
        cursor = (cursor + 1) % slots.count
        var due: [Element] = []
        swap(&due, &slots[cursor])
        count -= due.count
        return due
    }
}
