#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// Appends this replica's commits to its tail, seals the tail into immutable segments and
/// merges small segments. Every method must be called with the store lock held.
struct TailWriter {
    let layout: StoreLayout
    let replica: ReplicaID
    /// Seal the tail once it grows past this many bytes.
    let sealThreshold: Int
    /// Merge the newest sealed segments while their total stays under this many bytes.
    let mergeTarget: Int
    /// This replica's tail file.
    let tailPath: String
    /// The last of this replica's operations that peers were sent or a shared folder was given
    /// (nil: none since this writer was made). Merges other than a full compaction keep the
    /// segments up to it apart from later ones, so that the next exchange with those peers
    /// sends the later segments as they are instead of decoding a merged one.
    var sharedThrough: UInt64?

    /// Whole-file operations of seals and merges.
    let files: any LogFileSystem

    /// What is known of the tail file from the last time this process held the lock.
    private(set) var fd: Int32 = -1
    private(set) var inode: UInt64 = 0
    /// The end of the tail's valid records.
    private(set) var knownEnd = 0
    private(set) var nextSeq: UInt64 = 1
    private(set) var latestTime: Timestamp = .zero
    /// Buffers reused by every append (a commit allocates no fresh ones).
    private var records = ByteWriter()
    private var payload = ByteWriter()
    private let compressor = LZ4Block.FastCompressor()
    /// Space reserved past ``knownEnd`` for commits written through memory.
    private var mapping = TailMapping()

    init(layout: StoreLayout, replica: ReplicaID, options: TaskStore.Options) {
        self.layout = layout
        self.replica = replica
        sealThreshold = options.sealThreshold
        mergeTarget = options.mergeTarget
        files = options.fileSystem
        tailPath = layout.tailFile(replica)
    }

    /// Gives back reserved space and closes the tail's descriptor when the writer goes away
    /// (the lock still held).
    mutating func release() {
        releaseReservation()
        closeFile()
    }

    mutating func closeFile() {
        mapping.unmap()
        if fd >= 0 { close(fd) }
        fd = -1
        knownEnd = 0
    }

    /// Opens the tail this writer just installed, whose `length` bytes hold the records it
    /// already knew (so it is not read back).
    mutating func reopenInstalledTail(length: Int) throws(StoreError) {
        closeFile()
        fd = open(tailPath, O_RDWR | O_CLOEXEC)
        var st = stat()
        guard fd >= 0, fstat(fd, &st) == 0 else { throw .io(operation: "open", path: tailPath, errno: errno) }
        inode = UInt64(st.st_ino)
        knownEnd = length
    }

    /// Cuts the tail back to its records, giving back the space reserved for commits written
    /// through memory. Must run before the lock is released: the next writer appends at the
    /// file's end.
    /// - Returns: whether there was space to give back.
    @discardableResult
    mutating func releaseReservation() -> Bool { mapping.giveBack(fd: fd, recordsEnd: knownEnd) }

    /// The invariants of the writer's view of its tail and its reserved space that it
    /// breaks (for tests; reads the file's size).
    func violations() -> [String] {
        let size = fd >= 0 ? Posix.linksAndSize(fd)?.size : nil
        var found = mapping.violations(recordsEnd: knownEnd, fileSize: size)
        if fd >= 0, !mapping.isReserved, let size, size != knownEnd {
            found.append("the tail is \(size) bytes, not the \(knownEnd) of its records")
        }
        return found
    }

    /// Brings the cached view of the tail up to date, truncating a torn last record.
    /// - Returns: the commits in the tail that this process had not seen (from other processes).
    mutating func synchronise() throws(StoreError) -> [Commit] {
        // Fast path: our open tail is still the live file (another process's seal would have
        // replaced it, leaving our inode unlinked) and nobody appended since (nor cut off the
        // space this writer reserved, which only a writer holding the lock may do).
        if fd >= 0, knownEnd > 0, let open = Posix.linksAndSize(fd), open.links > 0,
            open.size == (mapping.isReserved ? mapping.reservedEnd : knownEnd)
        {
            return []
        }
        var st = stat()
        guard stat(tailPath, &st) == 0 else { throw .io(operation: "open", path: tailPath, errno: errno) }
        var reopened = false
        if fd < 0 || UInt64(st.st_ino) != inode {
            reopened = true
            closeFile()
            fd = open(tailPath, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { throw .io(operation: "open", path: tailPath, errno: errno) }
            var fst = stat()
            fstat(fd, &fst)
            inode = UInt64(fst.st_ino)
            st = fst
        }
        if knownEnd > 0 && Int(st.st_size) == knownEnd { return [] }
        let bytes = try Posix.readAll(fd: fd, path: tailPath)
        // Only what other processes appended since we last looked needs decoding.
        let previousNext = knownEnd > 0 ? nextSeq : 0
        let contents: SegmentCodec.Contents
        do {
            contents = try SegmentCodec.read(bytes, skipThrough: previousNext == 0 ? .max : previousNext - 1)
        } catch {
            throw .damagedTail(path: tailPath, offset: 0, reason: "\(error)")
        }
        if let d = contents.damage {
            throw .damagedTail(path: tailPath, offset: d.offset, reason: d.reason)
        }
        let scan = contents.scan
        if scan.validEnd < bytes.count {
            // A torn write from a crash, or space a writer reserved and did not give back: it
            // was never acknowledged, so dropping it loses nothing.
            guard ftruncate(fd, off_t(scan.validEnd)) == 0 else {
                throw .io(operation: "truncate", path: tailPath, errno: errno)
            }
            try Posix.fsyncFD(fd, path: tailPath)
            mapping.forgetReservation()
        }
        if reopened && scan.nextSeq == scan.header.firstSeq, let held = try lastSealedSeq(), held >= scan.nextSeq {
            // An empty tail behind this replica's own sealed operations (a crash between
            // integrating them and restarting the tail): restart it after them.
            try files.writeAtomically(tailPath, SegmentCodec.tail(replica, firstSeq: held + 1, clock: max(contents.latestTime, latestTime)))
            closeFile()
            return try synchronise()
        }
        knownEnd = scan.validEnd
        nextSeq = scan.nextSeq
        if contents.latestTime > latestTime { latestTime = contents.latestTime }
        return contents.commits.filter { $0.firstSeq >= previousNext }
    }

    /// The last sequence number in this replica's sealed segments (nil if none).
    private func lastSealedSeq() throws(StoreError) -> UInt64? {
        try files.list(layout.logDirectory(replica)).compactMap(SealedName.init(fileName:)).map(\.last).max()
    }

    /// Appends one commit of `operations` and makes it durable (when `durable`): the common
    /// case, with no array allocated for it.
    /// - Parameters:
    ///   - floor: a time the commit must sort after (the latest time this process knows).
    ///   - throughMemory: copy the record into space reserved past the tail's end through a
    ///     shared mapping, not with a system call (for non-durable commits while the lock is
    ///     leased; ``releaseReservation()`` gives the space back).
    mutating func append(
        _ operations: [TaskOperation], floor: Timestamp, wall: UInt64, durable: Bool, throughMemory: Bool = false
    ) throws(StoreError) -> Commit {
        var clock = HybridLogicalClock(latest: max(latestTime, floor))
        records.removeAll()
        let commit = try frame(operations, firstSeq: nextSeq, clock: &clock, wall: wall)
        try writeRecords(durable: durable, throughMemory: throughMemory)
        nextSeq = commit.endSeq
        latestTime = clock.latest
        return commit
    }

    /// Appends several commits (each its own record and clock time) with one write, and
    /// makes them durable together (when `durable`). Parameters as for one commit.
    mutating func append(
        _ batch: [[TaskOperation]], floor: Timestamp, wall: UInt64, durable: Bool, throughMemory: Bool = false
    ) throws(StoreError) -> [Commit] {
        var clock = HybridLogicalClock(latest: max(latestTime, floor))
        var commits: [Commit] = []
        commits.reserveCapacity(batch.count)
        records.removeAll()
        var seq = nextSeq
        for operations in batch {
            let commit = try frame(operations, firstSeq: seq, clock: &clock, wall: wall)
            seq = commit.endSeq
            commits.append(commit)
        }
        try writeRecords(durable: durable, throughMemory: throughMemory)
        nextSeq = seq
        latestTime = clock.latest
        return commits
    }

    /// Stamps `operations` with the clock's next time and frames them as one commits record
    /// at the end of ``records``.
    private mutating func frame(
        _ operations: [TaskOperation], firstSeq: UInt64, clock: inout HybridLogicalClock, wall: UInt64
    ) throws(StoreError) -> Commit {
        let time = clock.tick(wall: wall)
        guard time.physical <= Timestamp.maxPhysical else { throw Self.clockAtBound }
        let commit = Commit(firstSeq: firstSeq, time: time, operations: operations)
        payload.removeAll()
        CommitCodec.encode(commit, into: &payload)
        try Self.checkFits(payload.count, operations: operations.count)
        payload.withUnsafeBytes {
            RecordFraming.append(
                type: .commits, firstSeq: firstSeq, opCount: UInt64(operations.count), payload: $0, compressor: compressor,
                to: &records)
        }
        return commit
    }

    /// Writes ``records`` at the tail's end (through the mapping or with `pwrite`) and syncs
    /// them when `durable`.
    private mutating func writeRecords(durable: Bool, throughMemory: Bool) throws(StoreError) {
        if throughMemory {
            try mapping.reserve(records.count, recordsEnd: knownEnd, fd: fd, path: tailPath)
            records.withUnsafeBytes { mapping.copy($0, at: knownEnd) }
            mapping.faultInAhead(recordsEnd: knownEnd)
        } else {
            try records.withUnsafeBytes { (b) throws(StoreError) in try Posix.writeAll(fd: fd, b, at: knownEnd, path: tailPath) }
        }
        if durable {
            guard Platform.syncData(fd) == 0 else { throw .io(operation: "fsync", path: tailPath, errno: errno) }
            DurabilityProbe.synced(fd, tailPath)
        }
        knownEnd += records.count
    }

    /// Records that the replica has observed `time` (from imported operations) at wall-clock
    /// time `wall`, so later commits sort after it even in a process that never loads the
    /// state; a time too far ahead moves the clock only as far as it may
    /// (``HybridLogicalClock/admitted(_:wall:)``).
    mutating func observe(_ observed: Timestamp, wall: UInt64, durable: Bool) throws(StoreError) {
        let time = HybridLogicalClock.admitted(observed, wall: wall)
        guard time > latestTime else { return }
        let record = SegmentCodec.clockRecord(firstSeq: nextSeq, clock: time)
        try Posix.writeAll(fd: fd, record, at: knownEnd, path: tailPath)
        if durable { try Posix.fsyncFD(fd, path: tailPath) }
        knownEnd += record.count
        latestTime = time
    }

    var needsSeal: Bool { knownEnd > sealThreshold }

    /// Whether the tail is longer than `bytes`.
    func isLonger(than bytes: Int) -> Bool { knownEnd > bytes }

    /// The tail's records as this writer last left or read them (nil before it opened one):
    /// what a seal reads.
    var mark: TailMark? { fd >= 0 && knownEnd > 0 ? TailMark(inode: inode, size: Int64(knownEnd)) : nil }

    /// The tail file as a reader would see it now (its size includes reserved space).
    var fileMark: TailMark? {
        // No closure here: one capturing the writer would copy it on every commit.
        guard var m = mark else { return nil }
        if mapping.isReserved { m.size = Int64(mapping.reservedEnd) }
        return m
    }
}
