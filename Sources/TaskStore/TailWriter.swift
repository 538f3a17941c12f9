#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CRDTCore
import Dispatch
import OpLogFormat
import TaskModel

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

    /// What is known of the tail file from the last time this process held the lock.
    private var fd: Int32 = -1
    private var inode: UInt64 = 0
    private var knownEnd = 0
    private(set) var nextSeq: UInt64 = 1
    private(set) var latestTime: Timestamp = .zero
    /// Buffers reused by every append (a commit allocates no fresh ones).
    private var records = ByteWriter()
    private var payload = ByteWriter()
    private let compressor = LZ4Block.FastCompressor()
    /// The tail file mapped into memory (shared), for commits written through it.
    private var mapping: UnsafeMutableRawPointer?
    private var mappedLength = 0
    /// While non-zero, the tail file is this long: zero bytes reserved past ``knownEnd`` for
    /// the next records, which are copied into the mapping instead of written with a system
    /// call. Always more than `knownEnd` (the file ends in at least one zero byte, so readers
    /// see a torn tail and never mistake a reserved size for a settled one). Given back
    /// (the file cut to `knownEnd`) before the lock is released.
    private var reservedEnd = 0
    /// The end of the reserved pages handed to ``faultInAhead()`` for the current mapping.
    private var faultedEnd = 0

    init(layout: StoreLayout, replica: ReplicaID, sealThreshold: Int, mergeTarget: Int) {
        self.layout = layout
        self.replica = replica
        self.sealThreshold = sealThreshold
        self.mergeTarget = mergeTarget
        tailPath = layout.tailFile(replica)
    }

    /// Gives back reserved space and closes the tail's descriptor when the writer goes away
    /// (the lock still held).
    mutating func release() {
        releaseReservation()
        closeFile()
    }

    mutating func closeFile() {
        if let mapping { munmap(mapping, mappedLength) }
        mapping = nil
        mappedLength = 0
        reservedEnd = 0
        faultedEnd = 0
        if fd >= 0 { close(fd) }
        fd = -1
        knownEnd = 0
    }

    /// Cuts the tail back to its records, giving back the space reserved for commits written
    /// through memory. Must run before the lock is released: the next writer appends at the
    /// file's end.
    /// - Returns: whether there was space to give back.
    @discardableResult
    mutating func releaseReservation() -> Bool {
        guard reservedEnd > 0, fd >= 0 else { return false }
        reservedEnd = 0
        faultedEnd = 0
        while ftruncate(fd, off_t(knownEnd)) != 0 && errno == EINTR {}
        return true
    }

    /// Bytes reserved at a time past the records (rounded to whole pages).
    static let reservation = 1 << 20

    /// Makes sure the file has zero bytes reserved and mapped past ``knownEnd`` for `count`
    /// more bytes, with at least one to spare.
    private mutating func reserve(_ count: Int) throws(StoreError) {
        let needed = knownEnd + count
        if needed < reservedEnd && needed < mappedLength { return }
        let page = MemoryHint.pageSize
        let end = (needed + Self.reservation + page - 1) / page * page
        // Blocks are allocated now, so running out of space is an error here, never a fault
        // on a write through the mapping.
        let status = posix_fallocate(fd, off_t(knownEnd), off_t(end - knownEnd))
        guard status == 0 else { throw .io(operation: "reserve space in", path: tailPath, errno: status) }
        reservedEnd = end  // given back before the lock is released, even if mapping fails below
        if end > mappedLength {
            let length = max(end, 2 * mappedLength, 4 << 20)
            if let mapping { munmap(mapping, mappedLength) }
            mapping = nil
            mappedLength = 0
            faultedEnd = 0
            let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
            guard let p, p != MAP_FAILED else { throw .io(operation: "map", path: tailPath, errno: errno) }
            // Each page is faulted in as a record first reaches it; readahead would only fill
            // pages that the next give-back drops unused.
            _ = madvise(p, length, MADV_RANDOM)
            mapping = p
            mappedLength = length
        }
    }

    /// Bytes of reserved pages faulted in at a time ahead of the records.
    static let faultWindow = 128 << 10

    /// Keeps the reserved pages just ahead of the records faulted in, a window at a time, on
    /// another thread: a page of a shared file mapping costs several microseconds to fault
    /// in (on ext4, about 7 µs per 4 KiB), which the committing thread would otherwise pay
    /// once per few dozen commits. A hint: a page not yet faulted in when a record reaches it
    /// is faulted in then. (The range may be unmapped or cut off the file by the time the
    /// other thread gets to it: the kernel then reports an error instead of faulting. Or
    /// something else may be mapped there by then, whose pages are then faulted in. Nothing
    /// is written either way.)
    private mutating func faultInAhead() {
        #if os(Linux)
        guard let mapping, reservedEnd > 0, knownEnd + Self.faultWindow / 2 >= faultedEnd else { return }
        let page = MemoryHint.pageSize
        let start = max(faultedEnd, knownEnd / page * page)
        let end = min(reservedEnd, start + Self.faultWindow)
        guard end > start else { return }
        faultedEnd = end
        let (address, bytes) = (UInt(bitPattern: mapping + start), end - start)
        Self.faulting.async { _ = madvise(UnsafeMutableRawPointer(bitPattern: address), bytes, MADV_POPULATE_WRITE) }
        #endif
    }

    /// One thread for every writer's faulting in: it must never hold up the shared pool's
    /// threads (which end the leases on time).
    private static let faulting = DispatchQueue(label: "tasklog.tail-fault-in", qos: .utility)

    /// Brings the cached view of the tail up to date, truncating a torn last record.
    /// - Returns: the commits in the tail that this process had not seen (from other processes).
    mutating func synchronise() throws(StoreError) -> [Commit] {
        // Fast path: our open tail is still the live file (another process's seal would have
        // replaced it, leaving our inode unlinked) and nobody appended since (nor cut off the
        // space this writer reserved, which only a writer holding the lock may do).
        if fd >= 0, knownEnd > 0, let open = Posix.linksAndSize(fd), open.links > 0,
            open.size == (reservedEnd > 0 ? reservedEnd : knownEnd)
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
            reservedEnd = 0
            faultedEnd = 0
        }
        if reopened && scan.nextSeq == scan.header.firstSeq, let held = try lastSealedSeq(), held >= scan.nextSeq {
            // An empty tail behind this replica's own sealed operations (a crash between
            // integrating them and restarting the tail): restart it after them.
            try Posix.writeAtomically(tailPath, SegmentCodec.tail(replica, firstSeq: held + 1, clock: max(contents.latestTime, latestTime)))
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
        try Posix.list(layout.logDirectory(replica)).compactMap(SealedName.init(fileName:)).map(\.last).max()
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
        guard time.physical <= Timestamp.maxPhysical else {
            throw .invalidArgument("this replica's clock has reached the largest time the format allows (a replica with a wild clock wrote far in the future); nothing was written")
        }
        let commit = Commit(firstSeq: firstSeq, time: time, operations: operations)
        payload.removeAll()
        CommitCodec.encode(commit, into: &payload)
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
            try reserve(records.count)
            records.withUnsafeBytes { mapping!.advanced(by: knownEnd).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            faultInAhead()
        } else {
            try records.withUnsafeBytes { (b) throws(StoreError) in try Posix.writeAll(fd: fd, b, at: knownEnd, path: tailPath) }
        }
        if durable {
            guard fdatasync(fd) == 0 else { throw .io(operation: "fsync", path: tailPath, errno: errno) }
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
    var fileMark: TailMark? { mark.map { reservedEnd > 0 ? TailMark(inode: $0.inode, size: Int64(reservedEnd)) : $0 } }

    /// Moves the tail's commits into a new sealed segment and starts an empty tail.
    /// - Parameter rescueDamage: when the tail is damaged mid-file, keep the readable commits,
    ///   set the damaged file aside and start afresh instead of refusing.
    mutating func seal(rescueDamage: Bool = false) throws(StoreError) -> [StoreWarning] {
        var warnings: [StoreWarning] = []
        guard let bytes = try Posix.readFile(tailPath) else { throw .io(operation: "open", path: tailPath, errno: ENOENT) }
        let contents: SegmentCodec.Contents
        do {
            contents = try SegmentCodec.read(bytes)
        } catch {
            throw .damagedTail(path: tailPath, offset: 0, reason: "\(error)")
        }
        var commits = contents.commits
        var next = contents.commits.last?.endSeq ?? contents.header.firstSeq
        var clock = max(contents.latestTime, latestTime)
        if let d = contents.damage {
            guard rescueDamage else { throw .damagedTail(path: tailPath, offset: d.offset, reason: d.reason) }
            // Keep what follows the damage too, and give each unreadable sequence number a
            // placeholder, so no number is ever used for two different operations.
            var lost: UInt64 = 0
            for record in bytes.withUnsafeBytes({ SegmentScanner.recover($0, after: d.offset, minimumSeq: next) }) {
                guard let payload = try? bytes.withUnsafeBytes({ buf in
                    try Result { () throws(LogReadError) in try RecordFraming.payload(of: record, in: buf) }.get()
                }) else { continue }
                if record.type == .clock {
                    if let t = try? SegmentCodec.clockTime(payload) { clock = max(clock, t) }
                    continue
                }
                guard let decoded = try? CommitCodec.decode(payload, firstSeq: record.firstSeq, opCount: record.opCount) else { continue }
                for c in decoded where c.firstSeq >= next {
                    let gapTime = (commits.last?.time ?? contents.latestTime).successor
                    if c.firstSeq > next {
                        guard gapTime < c.time else { continue }  // cannot be ordered: left for a later placeholder
                        let gap = c.firstSeq - next
                        let placeholder = [TaskOperation](repeating: .unknown(kind: CommitCodec.lostOperationHeader, body: []), count: Int(gap))
                        commits.append(Commit(firstSeq: next, time: gapTime, operations: placeholder))
                        lost += gap
                    } else if let last = commits.last, c.time <= last.time {
                        continue
                    }
                    commits.append(c)
                    next = c.endSeq
                    clock = max(clock, c.time)
                }
            }
            // The damaged bytes are kept beside the log; the tail itself is replaced below, so
            // there is never a moment without one.
            let aside = tailPath + ".damaged-\(Posix.wallClockMilliseconds())"
            try Posix.writeAtomically(aside, bytes)
            warnings.append(StoreWarning(
                path: aside,
                message: "damaged at byte \(d.offset) (\(d.reason)); every readable operation was kept\(lost > 0 ? ", \(lost) unreadable one(s) are lost unless another replica has them" : ""); a copy of the damaged file was set aside"))
        } else if commits.isEmpty {
            return warnings
        }
        if !commits.isEmpty {
            try Posix.writeAtomically(
                layout.sealedFile(replica, first: commits.first!.firstSeq, last: commits.last!.endSeq - 1),
                SegmentCodec.sealed(replica, commits))
        }
        try Posix.writeAtomically(tailPath, SegmentCodec.tail(replica, firstSeq: next, clock: clock))
        closeFile()
        try mergeSealed()
        _ = try synchronise()
        return warnings
    }

    /// A seal worked out away from the lock by ``prepareSeal(layout:replica:of:)``, to be
    /// completed under it by ``completeSeal(_:)``.
    struct PreparedSeal: Sendable {
        /// The tail file and the prefix of it that was read.
        var source: TailMark
        var first: UInt64
        /// The sequence number after the last sealed operation.
        var next: UInt64
        /// The greatest time in the prefix (commits and clock records).
        var latestTime: Timestamp
        /// The sealed segment, written and synced beside its final name (write-temp's first
        /// half, done away from the lock).
        var segmentFile: String
        /// The fresh tail, as far as the old one held valid records when prepared (up to
        /// `freshFrom` in the old tail), written and synced beside it; `freshLength` bytes.
        var freshFile: String
        var freshFrom: Int
        var freshLength: Int

        /// Removes the prepared files (the seal is not completed).
        func discard() {
            unlink(segmentFile)
            unlink(freshFile)
        }
    }

    /// Encodes the commits in the first `mark.size` bytes of the tail `mark` names as a sealed
    /// segment, and writes the fresh tail that will follow it with the records after them.
    /// Takes no lock: a tail's valid records never change while the file is the tail. Nil if
    /// the tail was replaced meanwhile, is damaged or holds no commits (a seal under the lock
    /// then deals with it).
    static func prepareSeal(layout: StoreLayout, replica: ReplicaID, of mark: TailMark) -> PreparedSeal? {
        let path = layout.tailFile(replica)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        let sealedEnd = Int(mark.size)
        guard fstat(fd, &st) == 0, UInt64(st.st_ino) == mark.inode,
            let bytes = try? Posix.readAll(fd: fd, path: path), bytes.count >= sealedEnd,
            let contents = try? SegmentCodec.read(Array(bytes[..<sealedEnd])), contents.damage == nil,
            let first = contents.commits.first, let last = contents.commits.last,
            let scan = try? bytes.withUnsafeBytes({ try SegmentScanner.scan($0) }), scan.validEnd >= sealedEnd
        else { return nil }
        let segment = SegmentCodec.sealed(replica, contents.commits)
        let fresh = SegmentCodec.tail(replica, firstSeq: last.endSeq, clock: contents.latestTime) + bytes[sealedEnd..<scan.validEnd]
        guard let segmentFile = try? Posix.writeTemporary(beside: layout.sealedFile(replica, first: first.firstSeq, last: last.endSeq - 1), segment)
        else { return nil }
        guard let freshFile = try? Posix.writeTemporary(beside: path, fresh) else {
            unlink(segmentFile)
            return nil
        }
        return PreparedSeal(
            source: mark, first: first.firstSeq, next: last.endSeq, latestTime: contents.latestTime,
            segmentFile: segmentFile, freshFile: freshFile, freshFrom: scan.validEnd, freshLength: fresh.count)
    }

    /// Completes a prepared seal if the tail is still the file it read (call after
    /// ``synchronise()``, holding the lock): installs the sealed segment, then replaces the
    /// tail with the prepared fresh one, to which it first appends the records added since it
    /// was prepared, copied as they are.
    /// - Returns: false, writing nothing, if the tail was replaced meanwhile.
    mutating func completeSeal(_ prepared: PreparedSeal) throws(StoreError) -> Bool {
        guard fd >= 0, inode == prepared.source.inode, knownEnd >= prepared.freshFrom else {
            prepared.discard()
            return false
        }
        do throws(StoreError) {
            let appendedSince = try Posix.read(fd: fd, from: prepared.freshFrom, count: knownEnd - prepared.freshFrom, path: tailPath)
            if !appendedSince.isEmpty {
                let fresh = open(prepared.freshFile, O_WRONLY | O_CLOEXEC)
                guard fresh >= 0 else { throw .io(operation: "open", path: prepared.freshFile, errno: errno) }
                defer { close(fresh) }
                try Posix.writeAll(fd: fresh, appendedSince, at: prepared.freshLength, path: prepared.freshFile)
                try Posix.fsyncFD(fresh, path: prepared.freshFile)
            }
            try Posix.install(prepared.segmentFile, as: layout.sealedFile(replica, first: prepared.first, last: prepared.next - 1))
            try Posix.install(prepared.freshFile, as: tailPath)
            let length = prepared.freshLength + appendedSince.count
            closeFile()
            // This writer just installed the fresh tail, holding the lock: its records are the
            // ones it already knew (sequence numbers and clock unchanged), so it is not read back.
            fd = open(tailPath, O_RDWR | O_CLOEXEC)
            var st = stat()
            guard fd >= 0, fstat(fd, &st) == 0 else { throw .io(operation: "open", path: tailPath, errno: errno) }
            inode = UInt64(st.st_ino)
            knownEnd = length
            return true
        } catch {
            // Whatever was not installed is removed (a rename that happened stays).
            prepared.discard()
            throw error
        }
    }

    /// The commits of a sealed segment if it reads completely and matches its name.
    private static func cleanCommits(_ bytes: [UInt8], _ name: SealedName) -> [Commit]? {
        guard let c = try? SegmentCodec.read(bytes), c.damage == nil,
            c.commits.first?.firstSeq == name.first, c.commits.last.map({ $0.endSeq - 1 }) == name.last
        else { return nil }
        return c.commits
    }

    private func readsCleanly(_ path: String, _ name: SealedName) throws(StoreError) -> Bool {
        guard let bytes = try Posix.readFile(path) else { return false }
        return Self.cleanCommits(bytes, name) != nil
    }

    /// Merges the newest run of this replica's sealed segments whose total size stays under
    /// the merge target, and removes segments another one fully covers.
    mutating func mergeSealed(mergeEverything: Bool = false) throws(StoreError) {
        try removeCoveredSegments()
        if let prepared = try Self.prepareMerge(
            layout: layout, replica: replica, target: mergeTarget, everything: mergeEverything,
            keepingApartAt: mergeEverything ? nil : sharedThrough)
        {
            _ = try completeMerge(prepared)
        }
    }

    /// Leftovers of an interrupted merge: a segment inside another one's range, removed only
    /// when that other one reads cleanly.
    mutating func removeCoveredSegments() throws(StoreError) {
        let dir = layout.logDirectory(replica)
        let segments = try Self.sealedSegments(in: dir)
        var kept: [SealedName] = []
        for s in segments {
            if let k = kept.last, s.last <= k.last, try readsCleanly(Posix.join(dir, k.fileName), k) {
                unlink(Posix.join(dir, s.fileName))
            } else {
                kept.append(s)
            }
        }
    }

    /// The sealed segments in a replica folder, in sequence order (the widest first where two
    /// start at the same number).
    private static func sealedSegments(in dir: String) throws(StoreError) -> [SealedName] {
        try Posix.list(dir).compactMap(SealedName.init(fileName:))
            .sorted(by: SealedName.readingOrder)
    }

    /// A merge worked out by ``prepareMerge(layout:replica:target:everything:keepingApartAt:)``.
    struct PreparedMerge: Sendable {
        var run: [SealedName]
        /// The merged segment, written and synced beside its final name.
        var segmentFile: String
    }

    /// Picks the run of segments to merge and encodes their commits as one segment. Takes no
    /// lock (sealed segments never change); nil if there is nothing to merge or a segment of
    /// the run does not read cleanly (never merge around damage).
    /// - Parameter barrier: a run never joins segments ending at or before it to later ones
    ///   (``sharedThrough``).
    static func prepareMerge(
        layout: StoreLayout, replica: ReplicaID, target: Int, everything: Bool, keepingApartAt barrier: UInt64?
    ) throws(StoreError) -> PreparedMerge? {
        let dir = layout.logDirectory(replica)
        let segments = try Self.sealedSegments(in: dir)
        // Size-tiered: the newest segments merge while each older one is at most twice the
        // size of everything newer in the run, so a big segment is rewritten only once
        // enough has piled up after it (amortised O(log n) rewrites per operation);
        // `compact` merges everything up to the merge target.
        var run: [SealedName] = []
        var total = 0
        for s in segments.reversed() {
            let size = Posix.fileSize(Posix.join(dir, s.fileName)) ?? 0
            if total + size > target && !run.isEmpty { break }
            if let first = run.first, s.last + 1 != first.first { break }
            if !everything && !run.isEmpty && size > 2 * total { break }
            if let barrier, s.last <= barrier, let earliest = run.first, earliest.first > barrier { break }
            run.insert(s, at: 0)
            total += size
        }
        guard run.count >= 2 else { return nil }
        var commits: [Commit] = []
        for s in run {
            guard let bytes = try Posix.readFile(Posix.join(dir, s.fileName)), let c = cleanCommits(bytes, s) else { return nil }
            commits += c
        }
        let file = try Posix.writeTemporary(
            beside: layout.sealedFile(replica, first: run.first!.first, last: run.last!.last), SegmentCodec.sealed(replica, commits))
        return PreparedMerge(run: run, segmentFile: file)
    }

    /// Writes a prepared merge (holding the lock) unless a segment of its run is gone (merged
    /// meanwhile by another process); then deletes the run.
    /// - Returns: whether it was written.
    func completeMerge(_ prepared: PreparedMerge) throws(StoreError) -> Bool {
        let dir = layout.logDirectory(replica)
        guard prepared.run.allSatisfy({ Posix.exists(Posix.join(dir, $0.fileName)) }) else {
            unlink(prepared.segmentFile)
            return false
        }
        try Posix.install(prepared.segmentFile, as: layout.sealedFile(replica, first: prepared.run.first!.first, last: prepared.run.last!.last))
        for s in prepared.run { unlink(Posix.join(dir, s.fileName)) }
        try Posix.fsyncDirectory(dir)
        return true
    }
}
