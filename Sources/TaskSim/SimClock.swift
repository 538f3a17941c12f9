import Synchronization

/// One replica's wall clock: what its store reads through `TaskStore.Options.wallClock`.
///
/// The simulator keeps one true time and gives each replica a skew from it; a skew may be a
/// few milliseconds, hours backwards, or years ahead (a clock set far into the future), and
/// it may change at any step (a clock corrected backwards). The store only ever reads
/// ``now``; the simulator sets it before each action of the replica.
package final class SimClock: Sendable {
    private let reading: Atomic<UInt64>
    private let offset: Atomic<Int64>

    package init(trueTime: UInt64, skew: Int64 = 0) {
        reading = Atomic(0)
        offset = Atomic(skew)
        advance(to: trueTime)
    }

    /// Milliseconds since the epoch, as this replica's clock reads them.
    package var now: UInt64 { reading.load(ordering: .relaxed) }

    /// How far this clock is from the true time, in milliseconds.
    package var skew: Int64 {
        get { offset.load(ordering: .relaxed) }
        set { offset.store(newValue, ordering: .relaxed) }
    }

    /// Moves the reading to `trueTime` plus this clock's skew (never below 0).
    package func advance(to trueTime: UInt64) {
        let t = Int64(clamping: trueTime) + skew
        reading.store(UInt64(max(0, t)), ordering: .relaxed)
    }

    /// Sets the reading itself (two clocks that happen to read the same millisecond) until
    /// the next ``advance(to:)``.
    package func pin(_ reading: UInt64) {
        self.reading.store(reading, ordering: .relaxed)
    }

    /// The closure for `TaskStore.Options.wallClock`.
    package var wallClock: @Sendable () -> UInt64 { { [self] in now } }
}
