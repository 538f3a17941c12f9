#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// Sealing: the tail's commits move into an immutable segment and a fresh tail follows it
/// (Spec/log-format.md, "Seal").
extension TailWriter {
    /// Moves the tail's commits into a new sealed segment and starts an empty tail.
    /// - Parameter rescueDamage: when the tail is damaged mid-file, keep the readable commits,
    ///   set the damaged file aside and start afresh instead of refusing.
    mutating func seal(rescueDamage: Bool = false) throws(StoreError) -> [StoreWarning] {
        guard let bytes = try files.read(tailPath) else { throw .io(operation: "open", path: tailPath, errno: ENOENT) }
        let contents: SegmentCodec.Contents
        do {
            contents = try SegmentCodec.read(bytes)
        } catch {
            throw .damagedTail(path: tailPath, offset: 0, reason: "\(error)")
        }
        var warnings: [StoreWarning] = []
        var kept = (
            commits: contents.commits, next: contents.commits.last?.endSeq ?? contents.header.firstSeq,
            clock: max(contents.latestTime, latestTime))
        if let d = contents.damage {
            guard rescueDamage else { throw .damagedTail(path: tailPath, offset: d.offset, reason: d.reason) }
            let rescue = TailRescue(bytes, contents, damageOffset: d.offset, clock: kept.clock)
            kept = (rescue.commits, rescue.next, rescue.clock)
            warnings.append(try setAside(bytes, damage: d, lost: rescue.lost))
        } else if kept.commits.isEmpty {
            return warnings
        }
        if let first = kept.commits.first, let last = kept.commits.last {
            try files.writeAtomically(
                layout.sealedFile(replica, first: first.firstSeq, last: last.endSeq - 1), SegmentCodec.sealed(replica, kept.commits))
        }
        try files.writeAtomically(tailPath, SegmentCodec.tail(replica, firstSeq: kept.next, clock: kept.clock))
        closeFile()
        try mergeSealed()
        _ = try synchronise()
        return warnings
    }

    /// Writes `operations`, too large for one record of the tail, as one commit per run of
    /// `runs` (from ``CommitCodec/split(_:payloadLimit:)``) in a new sealed segment, so that
    /// readers find all of them or none: the tail is sealed, the segment appears by rename, and
    /// a fresh tail continues after it. A crash before the fresh tail leaves an empty tail
    /// behind the segment, which ``synchronise()`` restarts after it.
    /// - Throws: ``StoreError/invalidArgument(_:)``, writing nothing, when a commit would pass
    ///   the largest payload a record may hold (one operation that large).
    mutating func appendSealed(
        _ operations: [TaskOperation], runs: [Range<Int>], floor: Timestamp, wall: UInt64
    ) throws(StoreError) -> [Commit] {
        var clock = HybridLogicalClock(latest: max(latestTime, floor))
        var commits: [Commit] = []
        var seq = nextSeq
        for run in runs {
            let time = clock.tick(wall: wall)
            guard time.physical <= Timestamp.maxPhysical else { throw Self.clockAtBound }
            let commit = Commit(firstSeq: seq, time: time, operations: operations[run])
            // Runs of several operations fit the limit they were cut to; one alone may not.
            if run.count == 1 { try Self.checkFits(CommitCodec.payloadSize(of: CollectionOfOne(commit)), operations: 1) }
            commits.append(commit)
            seq = commit.endSeq
        }
        let segment = SegmentCodec.sealed(replica, commits)
        _ = try seal()
        try files.writeAtomically(layout.sealedFile(replica, first: commits[0].firstSeq, last: seq - 1), segment)
        // From here the open tail lies behind the segment: should the fresh tail fail, the
        // next synchronise opens the file again and restarts it after the segment.
        closeFile()
        try files.writeAtomically(tailPath, SegmentCodec.tail(replica, firstSeq: seq, clock: clock.latest))
        _ = try synchronise()
        return commits
    }

    /// Refuses, writing nothing, a commit of `operations` whose payload of `bytes` passes what
    /// a record may hold.
    static func checkFits(_ bytes: Int, operations: Int) throws(StoreError) {
        guard bytes > FormatConstants.maxRawPayload else { return }
        let size = "takes \((bytes + (1 << 20) - 1) >> 20) MiB, more than the 64 MiB one log record may hold"
        throw .invalidArgument(
            operations == 1
                ? "an operation \(size): check for a title, note or other value that long"
                : "a commit of \(operations) operations \(size): commit fewer at a time (TaskStore.commitWhole splits them)")
    }

    static var clockAtBound: StoreError {
        .invalidArgument("this replica's clock has reached the largest time the format allows (a replica with a wild clock wrote far in the future); nothing was written")
    }

    /// Keeps a copy of a damaged tail beside the log (the tail itself is replaced after, so
    /// there is never a moment without one) and says so.
    private func setAside(_ bytes: [UInt8], damage d: (offset: Int, reason: String), lost: UInt64) throws(StoreError) -> StoreWarning {
        let aside = tailPath + ".damaged-\(Posix.wallClockMilliseconds())"
        try files.writeAtomically(aside, bytes)
        let unreadable = lost > 0 ? ", \(lost) unreadable one(s) are lost unless another replica has them" : ""
        return StoreWarning(
            path: aside,
            message: "damaged at byte \(d.offset) (\(d.reason)); every readable operation was kept\(unreadable); a copy of the damaged file was set aside")
    }

    /// A seal worked out away from the lock by ``prepareSeal(layout:replica:files:of:)``, to be
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
        func discard(_ files: any LogFileSystem) {
            files.remove(segmentFile)
            files.remove(freshFile)
        }
    }

    /// Encodes the commits in the first `mark.size` bytes of the tail `mark` names as a sealed
    /// segment, and writes the fresh tail that will follow it with the records after them.
    /// Takes no lock: a tail's valid records never change while the file is the tail. Nil if
    /// the tail was replaced meanwhile, is damaged or holds no commits (a seal under the lock
    /// then deals with it).
    static func prepareSeal(layout: StoreLayout, replica: ReplicaID, files: any LogFileSystem, of mark: TailMark) -> PreparedSeal? {
        let path = layout.tailFile(replica)
        let sealedEnd = Int(mark.size)
        guard let bytes = readIfStill(mark, path), bytes.count >= sealedEnd,
            let contents = try? SegmentCodec.read(Array(bytes[..<sealedEnd])), contents.damage == nil,
            let first = contents.commits.first, let last = contents.commits.last,
            let scan = try? bytes.withUnsafeBytes({ try SegmentScanner.scan($0) }), scan.validEnd >= sealedEnd
        else { return nil }
        let segment = SegmentCodec.sealed(replica, contents.commits)
        let fresh = SegmentCodec.tail(replica, firstSeq: last.endSeq, clock: contents.latestTime) + bytes[sealedEnd..<scan.validEnd]
        let segmentName = layout.sealedFile(replica, first: first.firstSeq, last: last.endSeq - 1)
        guard let segmentFile = try? files.writeTemporary(beside: segmentName, segment) else { return nil }
        guard let freshFile = try? files.writeTemporary(beside: path, fresh) else {
            files.remove(segmentFile)
            return nil
        }
        return PreparedSeal(
            source: mark, first: first.firstSeq, next: last.endSeq, latestTime: contents.latestTime,
            segmentFile: segmentFile, freshFile: freshFile, freshFrom: scan.validEnd, freshLength: fresh.count)
    }

    /// The file at `path` if it is still the one `mark` names.
    private static func readIfStill(_ mark: TailMark, _ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, UInt64(st.st_ino) == mark.inode else { return nil }
        return try? Posix.readAll(fd: fd, path: path)
    }

    /// Completes a prepared seal if the tail is still the file it read (call after
    /// ``synchronise()``, holding the lock): installs the sealed segment, then replaces the
    /// tail with the prepared fresh one, to which it first appends the records added since it
    /// was prepared, copied as they are.
    /// - Returns: false, writing nothing, if the tail was replaced meanwhile.
    mutating func completeSeal(_ prepared: PreparedSeal) throws(StoreError) -> Bool {
        guard fd >= 0, inode == prepared.source.inode, knownEnd >= prepared.freshFrom else {
            prepared.discard(files)
            return false
        }
        do throws(StoreError) {
            let appendedSince = try Posix.read(fd: fd, from: prepared.freshFrom, count: knownEnd - prepared.freshFrom, path: tailPath)
            if !appendedSince.isEmpty { try Self.append(appendedSince, to: prepared.freshFile, at: prepared.freshLength) }
            try files.install(prepared.segmentFile, as: layout.sealedFile(replica, first: prepared.first, last: prepared.next - 1))
            try files.install(prepared.freshFile, as: tailPath)
            // This writer just installed the fresh tail, holding the lock: its records are the
            // ones it already knew (sequence numbers and clock unchanged), so it is not read back.
            try reopenInstalledTail(length: prepared.freshLength + appendedSince.count)
            return true
        } catch {
            // Whatever was not installed is removed (a rename that happened stays).
            prepared.discard(files)
            throw error
        }
    }

    /// Appends `bytes` at `offset` of the prepared file `path` and syncs it.
    private static func append(_ bytes: [UInt8], to path: String, at offset: Int) throws(StoreError) {
        let fresh = open(path, O_WRONLY | O_CLOEXEC)
        guard fresh >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        defer { close(fresh) }
        try Posix.writeAll(fd: fresh, bytes, at: offset, path: path)
        try Posix.fsyncFD(fresh, path: path)
    }
}
