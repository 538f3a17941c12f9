import Dispatch

/// The monotonic clock and the timer a lock lease runs on. Tests inject a clock they move by
/// hand, so no test waits for real time to pass.
package protocol LeaseClock: Sendable {
    /// Nanoseconds on a monotonic clock.
    func now() -> UInt64
    /// Runs `body` on another thread once `nanoseconds` have passed on this clock.
    func after(nanoseconds: Int, _ body: @escaping @Sendable () -> Void)
}

/// The system's monotonic clock, with timers on the shared dispatch pool.
package struct SystemLeaseClock: LeaseClock {
    package init() {}

    package func now() -> UInt64 { Posix.monotonicNanoseconds() }

    package func after(nanoseconds: Int, _ body: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: body)
    }
}
