#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's advisory lock (`flock` on the `lock` file), serialising appends, seals and
/// compactions between processes. It is held for the write itself and, after a commit, at
/// most for a short lease (so that a burst of commits takes it once), never while idle.
enum StoreLock {
    /// Runs `body` while this process holds the lock, waiting for it if another process has it.
    static func holding<R>(_ path: String, _ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        var handle = Handle()
        defer { handle.release() }
        return try holding(path, handle: &handle, lease: nil, body).result
    }

    /// One store object's hold on the lock: the lock file's descriptor (opened on first use,
    /// so a busy writer does not open it for every commit) and the lease it may be keeping.
    struct Handle {
        var fd: Int32 = -1
        /// When the lease this handle keeps ends, in nanoseconds on the monotonic clock (nil:
        /// the lock is not held between calls). A plain integer: it is read on every commit.
        var leaseEnds: UInt64?
        /// Counts the leases taken, so a timer ends only the lease it was set for.
        var leaseNumber = 0

        var isLeased: Bool { leaseEnds != nil }

        /// Releases the lock, ending any lease.
        mutating func unlock() {
            flock(fd, LOCK_UN)
            leaseEnds = nil
        }

        /// Whether the handle keeps a lease (the one numbered `number`, if given).
        func keepsLease(_ number: Int? = nil) -> Bool { isLeased && (number == nil || number == leaseNumber) }

        /// Gives up a lease (if `number` is the one kept) and with it the lock.
        /// - Returns: whether a lease ended.
        @discardableResult
        mutating func endLease(number: Int? = nil) -> Bool {
            guard keepsLease(number) else { return false }
            unlock()
            return true
        }

        /// Releases the lock (if leased) and closes the descriptor.
        mutating func release() {
            endLease()
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// Runs `body` holding the lock through `handle`; a lease the handle keeps already holds it.
    /// - Parameter lease: keep the lock afterwards, if `body` succeeds, until this long after
    ///   the lease began (nil: release it now, ending any lease).
    /// - Returns: `body`'s result, and whether a new lease began (its owner must end it on time).
    static func holding<R>(
        _ path: String, handle: inout Handle, lease: Duration?, beforeUnlock: () -> Void = {},
        _ body: () throws(StoreError) -> R
    ) throws(StoreError) -> (result: R, leaseBegan: Bool) {
        if handle.fd < 0 {
            handle.fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard handle.fd >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        }
        if !handle.isLeased {
            while flock(handle.fd, LOCK_EX) != 0 {
                if errno == EINTR { continue }
                throw .io(operation: "lock", path: path, errno: errno)
            }
        }
        let result: R
        do {
            result = try body()
        } catch {
            beforeUnlock()
            handle.unlock()
            throw error
        }
        guard let lease, lease > .zero else {
            beforeUnlock()
            handle.unlock()
            return (result, false)
        }
        if let ends = handle.leaseEnds {
            if Posix.monotonicNanoseconds() >= ends {  // used up: the next call takes the lock afresh
                beforeUnlock()
                handle.unlock()
            }
            return (result, false)
        }
        handle.leaseEnds = Posix.monotonicNanoseconds() + UInt64(lease.nanoseconds)
        handle.leaseNumber += 1
        return (result, true)
    }
}

extension Duration {
    /// The whole nanoseconds of a non-negative duration.
    var nanoseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }
}
