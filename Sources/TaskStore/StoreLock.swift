#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's advisory lock (`flock` on the `lock` file), serialising appends, seals and
/// compactions between processes. It is held for the write itself and, after a commit, at
/// most for a short lease (so that a burst of commits takes it once), never while idle.
///
/// A writer that finds the lock taken says it is waiting, with a shared `flock` on the
/// `lock-wait` file, while it waits; a lease is carried on past its end by a commit that
/// finds nobody waiting, up to ``longestLeaseNanoseconds`` from when the lock was taken
/// (Spec/log-format.md, "Lock").
package enum StoreLock {
    /// The longest a lease may keep the lock from when it was taken, in nanoseconds: 10 ms,
    /// the format's limit.
    package static var longestLeaseNanoseconds: UInt64 { 10_000_000 }

    /// Runs `body` while this process holds the lock, waiting for it if another process has it.
    package static func holding<R>(_ path: String, _ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        var handle = Handle()
        defer { handle.release() }
        return try holding(path, handle: &handle, leaseNanoseconds: nil, body).result
    }

    /// One store object's hold on the lock: the lock file's descriptor (opened on first use,
    /// so a busy writer does not open it for every commit) and the lease it may be keeping.
    package struct Handle {
        var fd: Int32 = -1
        /// The `lock-wait` file's descriptor (opened when first needed; -1: not yet, -2: it
        /// cannot be, so every lease ends on time).
        var waitFD: Int32 = -1
        /// When the lease this handle keeps ends, in nanoseconds on the monotonic clock (nil:
        /// the lock is not held between calls). A plain integer: it is read on every commit.
        package internal(set) var leaseEnds: UInt64?
        /// When this handle took the lock it keeps under a lease.
        package internal(set) var takenAt: UInt64 = 0
        /// Counts the leases taken, so a timer ends only the lease it was set for.
        var leaseNumber = 0

        package init() {}

        package var isLeased: Bool { leaseEnds != nil }

        /// Releases the lock, ending any lease.
        mutating func unlock() {
            flock(fd, LOCK_UN)
            leaseEnds = nil
        }

        /// Takes the lock, waiting for it if another writer has it, and saying so while it
        /// waits (a shared lock on `lock-wait`, so that a lease kept in a burst of commits
        /// ends at its next commit rather than running to the longest a lease may).
        mutating func lock(_ path: String) throws(StoreError) {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return }
            guard errno == EWOULDBLOCK || errno == EINTR else { throw .io(operation: "lock", path: path, errno: errno) }
            let announced = openWaitFile(path) && Self.flockRetrying(waitFD, LOCK_SH) == 0
            defer { if announced { flock(waitFD, LOCK_UN) } }
            guard Self.flockRetrying(fd, LOCK_EX) == 0 else { throw .io(operation: "lock", path: path, errno: errno) }
        }

        /// Whether another writer says it is waiting for the lock (when unsure, it does).
        mutating func othersWait(_ path: String) -> Bool {
            guard openWaitFile(path), flock(waitFD, LOCK_EX | LOCK_NB) == 0 else { return true }
            flock(waitFD, LOCK_UN)
            return false
        }

        private mutating func openWaitFile(_ path: String) -> Bool {
            if waitFD == -1 {
                let fd = open(path + "-wait", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
                waitFD = fd >= 0 ? fd : -2
            }
            return waitFD >= 0
        }

        private static func flockRetrying(_ fd: Int32, _ operation: Int32) -> Int32 {
            while flock(fd, operation) != 0 {
                if errno != EINTR { return -1 }
            }
            return 0
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

        /// Releases the lock (if leased) and closes the descriptors.
        package mutating func release() {
            endLease()
            if fd >= 0 { close(fd) }
            if waitFD >= 0 { close(waitFD) }
            fd = -1
            waitFD = -1
        }
    }

    /// Runs `body` holding the lock through `handle`; a lease the handle keeps already holds it.
    /// - Returns: `body`'s result, and whether a new lease began (its owner must end it on time,
    ///   or when it was carried on).
    /// - Parameter leaseNanoseconds: keep the lock afterwards, if `body` succeeds, until this
    ///   long after the lease began (nil or 0: release it now, ending any lease). A call after
    ///   a lease's end carries it on for as long again when nobody waits for the lock, up to
    ///   ``longestLeaseNanoseconds`` from when it was taken. (Nanoseconds, not a `Duration`: it is
    ///   compared on every commit.)
    /// - Parameter clock: the clock the lease's times are read from.
    package static func holding<R>(
        _ path: String, handle: inout Handle, leaseNanoseconds lease: UInt64?, clock: any LeaseClock = SystemLeaseClock(),
        beforeUnlock: () -> Void = {}, _ body: () throws(StoreError) -> R
    ) throws(StoreError) -> (result: R, leaseBegan: Bool) {
        if handle.fd < 0 {
            handle.fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard handle.fd >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        }
        if !handle.isLeased { try handle.lock(path) }
        let result: R
        do {
            result = try body()
        } catch {
            beforeUnlock()
            handle.unlock()
            throw error
        }
        guard let lease, lease > 0 else {
            beforeUnlock()
            handle.unlock()
            return (result, false)
        }
        let now = clock.now()
        let longest = longestLeaseNanoseconds
        if let ends = handle.leaseEnds {
            guard now >= ends else { return (result, false) }
            if now < handle.takenAt + longest && !handle.othersWait(path) {
                handle.leaseEnds = min(now + lease, handle.takenAt + longest)
            } else {  // used up: the next call takes the lock afresh
                beforeUnlock()
                handle.unlock()
            }
            return (result, false)
        }
        handle.takenAt = now
        handle.leaseEnds = now + min(lease, longest)
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
