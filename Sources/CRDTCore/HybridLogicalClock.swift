/// A hybrid logical clock: issues timestamps close to wall-clock time that never go
/// backwards, even when the wall clock does, and that move past the timestamps observed
/// from other replicas, as far as ``maxAhead`` of the wall clock.
///
/// The clock is a value: the caller passes the wall-clock reading in, so tests pin time.
///
/// Invariant: every timestamp returned by ``tick(wall:)`` is greater than every timestamp
/// previously returned, and than every timestamp passed to ``observe(_:wall:)`` as far as
/// it was admitted (``admitted(_:wall:)``).
public struct HybridLogicalClock: Sendable, Equatable {
    /// The greatest timestamp issued or observed so far.
    public private(set) var latest: Timestamp

    public init(latest: Timestamp = .zero) {
        self.latest = latest
    }

    /// Issues the timestamp for a new local event at wall-clock time `wall` (milliseconds).
    public mutating func tick(wall: UInt64) -> Timestamp {
        let wall = min(wall, Timestamp.maxPhysical)
        latest = wall > latest.physical ? Timestamp(physical: wall, logical: 0) : latest.successor
        return latest
    }

    /// How far ahead of the wall clock a received timestamp may move the clock: 24 hours,
    /// in milliseconds. A replica whose clock is further ahead (or a forged operation)
    /// cannot drag every later write of its peers with it (Spec/crdt.md).
    public static let maxAhead: UInt64 = 24 * 60 * 60 * 1000

    /// `remote` as far as it may move a clock at wall-clock time `wall`: no later than
    /// ``maxAhead`` past `wall`.
    public static func admitted(_ remote: Timestamp, wall: UInt64) -> Timestamp {
        let ceiling = wall > Timestamp.maxPhysical - maxAhead ? Timestamp.maxPhysical : wall + maxAhead
        return remote.physical > ceiling ? Timestamp(physical: ceiling, logical: 0) : remote
    }

    /// Records a timestamp received from another replica at wall-clock time `wall`, so
    /// later ticks sort after it, or after as much of it as ``admitted(_:wall:)`` allows.
    public mutating func observe(_ remote: Timestamp, wall: UInt64) {
        let bounded = Self.admitted(remote, wall: wall)
        if bounded > latest { latest = bounded }
    }
}
