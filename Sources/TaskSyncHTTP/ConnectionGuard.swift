#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Engine) import TaskStore

/// Keeps clients that never finish a request head from holding the server's connections
/// (Spec/sync-http.md, "Limits").
///
/// Each open connection is tracked by its socket from the moment it is accepted. A head
/// (request line and headers) must be complete within ``headTimeout`` of the connection
/// opening or of the previous response, however slowly it trickles; otherwise the socket is
/// shut down and the server closes the connection. When connections near the limit, the
/// oldest one still waiting for its head is shut down to make room, so new clients keep
/// getting in.
final class ConnectionGuard: Sendable {
    /// Nanoseconds on the monotonic clock since when each socket has been waiting for a
    /// complete head; nil while a request is being answered.
    private let waiting = Mutex<[Int32: UInt64?]>([:])
    private let headTimeout: UInt64
    private let roomKept: Int
    private let stopped = Atomic<Bool>(false)

    /// - Parameters:
    ///   - headTimeout: seconds a head may take.
    ///   - highWater: how many connections may be open before the oldest waiting one is cut.
    init(headTimeout: Double, highWater: Int) {
        self.headTimeout = UInt64(headTimeout * 1e9)
        roomKept = highWater
    }

    /// Starts the thread that cuts connections past their deadline, until ``stop()``.
    func start() {
        _ = Posix.detachThread { [self] in
            while !stopped.load(ordering: .acquiring) {
                usleep(200_000)
                cutLateHeads()
            }
        }
    }

    func stop() { stopped.store(true, ordering: .releasing) }

    /// A connection was accepted (its head is awaited from now).
    func opened(_ fd: Int32) {
        let now = Posix.monotonicNanoseconds()
        waiting.withLock { open in
            open[fd] = now
            guard open.count > roomKept else { return }
            let oldest = open.compactMap { fd, since in since.map { (fd, $0) } }.min { $0.1 < $1.1 }
            if let (victim, _) = oldest, victim != fd { cut(victim, &open) }
        }
    }

    /// A request's head is complete: it is being answered, with no deadline.
    func headArrived(_ fd: Int32) { waiting.withLock { if $0[fd] != nil { $0[fd] = .some(nil) } } }

    /// A response went out: the next head is awaited from now.
    func answered(_ fd: Int32) {
        let now = Posix.monotonicNanoseconds()
        waiting.withLock { if $0[fd] != nil { $0[fd] = now } }
    }

    /// The connection is closed (its socket is still open, and closed right after).
    func closed(_ fd: Int32) { _ = waiting.withLock { $0.removeValue(forKey: fd) } }

    private func cutLateHeads() {
        let now = Posix.monotonicNanoseconds()
        waiting.withLock { open in
            for (fd, since) in open {
                if let since, now &- since > headTimeout { cut(fd, &open) }
            }
        }
    }

    /// Shuts the socket down: the server sees the connection end and closes it. Done under
    /// the lock that ``closed(_:)`` takes, so the socket is still the connection's own.
    private func cut(_ fd: Int32, _ open: inout [Int32: UInt64?]) {
        shutdown(fd, Int32(SHUT_RDWR))
        open[fd] = .some(nil)
    }
}
