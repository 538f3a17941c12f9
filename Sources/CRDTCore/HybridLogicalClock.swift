/// A hybrid logical clock: issues timestamps close to wall-clock time that never go
/// backwards, even when the wall clock does, and that move past every timestamp observed
/// from other replicas.
///
/// The clock is a value: the caller passes the wall-clock reading in, so tests pin time.
///
/// Invariant: every timestamp returned by ``tick(wall:)`` is greater than every timestamp
/// previously returned or passed to ``observe(_:)``.
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

    /// Records a timestamp received from another replica, so later ticks sort after it.
    public mutating func observe(_ remote: Timestamp) {
        if remote > latest { latest = remote }
    }
}
