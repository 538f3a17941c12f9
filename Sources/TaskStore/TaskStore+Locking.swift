#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

extension TaskStore {
    /// Brings the writer's view of this replica's tail up to date (holding the lock) and
    /// applies to the state what other processes appended to it.
    func synchroniseOwnTail(_ inner: inout Inner) throws(StoreError) {
        let others = try synchroniseFollowingIdentity(&inner)
        guard inner.state != nil else { return }
        let me = Self.inPlace(&inner.writer) { $0.replica }
        for c in others { inner.state!.apply(c, from: me) }
    }

    /// Reads the loaded state where it lies (nil when it is not loaded): `inner.state?.x`
    /// copied the whole state, retaining and releasing each of its parts, on every commit.
    @inline(__always)
    static func inPlace<R>(_ state: inout TaskState?, _ read: (borrowing TaskState) -> R) -> R? {
        withUnsafeMutablePointer(to: &state) { p in
            switch p.pointee {
            case .none: return nil
            case .some: return read(p.pointee!)
            }
        }
    }

    /// Reads the writer where it lies. `inner.writer.x` copies the writer, a field of a
    /// noncopyable value, retaining each of its parts: on every commit, several times.
    @inline(__always)
    static func inPlace<R>(_ writer: inout TailWriter, _ read: (inout TailWriter) -> R) -> R { read(&writer) }

    /// When the state holds every commit of this replica's tail as the writer last saw it,
    /// records the tail's mark, so the next read need not scan the tail again.
    func noteTailHeld(_ inner: inout Inner) {
        let (me, next, mark) = Self.inPlace(&inner.writer) { ($0.replica, $0.nextSeq, $0.fileMark) }
        if Self.inPlace(&inner.state, { $0.version[me] }) == next - 1, let mark {
            inner.tails[me] = mark
        }
    }

    /// Cuts the tail back to its records before the lock is released (space reserved for
    /// commits written through memory), and notes the file as this store now leaves it.
    func giveBackReservation(_ inner: inout Inner) {
        if inner.writer.releaseReservation() { noteTailHeld(&inner) }
    }

    /// Runs `body` holding the store lock through the handle `inner` keeps (a lease it keeps
    /// already holds the lock).
    /// - Parameter lease: keep the lock for this many nanoseconds after `body`
    ///   (``Options/lockLease``); nil releases it, ending any lease.
    func holdingLock<R>(
        _ inner: inout Inner, leaseNanoseconds lease: UInt64? = nil, _ body: (inout Inner) throws(StoreError) -> R
    ) throws(StoreError) -> R {
        var handle = inner.lock
        defer { inner.lock = handle }
        let (result, leaseBegan) = try StoreLock.holding(
            layout.lockFile, handle: &handle, leaseNanoseconds: lease, clock: options.leaseClock,
            beforeUnlock: { giveBackReservation(&inner) }
        ) { () throws(StoreError) -> R in try body(&inner) }
        if leaseBegan, let lease { endLeaseOnTime(number: handle.leaseNumber, after: Int(lease)) }
        return result
    }

    /// Ends lease `number` when it runs out, unless commits carried it on: it then ends when
    /// its new end comes.
    func endLeaseOnTime(number: Int, after nanoseconds: Int) {
        // The timer holds the store (for at most the lease) rather than a weak reference: a
        // weak reference would move every later retain of the store, one per commit, to the
        // runtime's slow path.
        options.leaseClock.after(nanoseconds: nanoseconds) {
            self.inner.withLock { inner in
                let now = self.options.leaseClock.now()
                if inner.lock.keepsLease(number), let ends = inner.lock.leaseEnds, ends > now {
                    self.endLeaseOnTime(number: number, after: Int(ends - now))
                } else {
                    self.endLease(&inner, number: number)
                }
            }
        }
    }
}

extension TaskStore {
    /// The invariants of this store's view of its tail and reserved space that it breaks
    /// (for tests; ``TailMapping`` lists them).
    package func tailViolations() -> [String] { inner.withLock { $0.writer.violations() } }
}
