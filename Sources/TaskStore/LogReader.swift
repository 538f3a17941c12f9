#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CRDTCore
import OpLogFormat
import TaskModel

/// Reads the per-replica logs of a store and applies the commits a state lacks.
///
/// Readers take no lock. They tolerate a concurrent writer: a torn last record is skipped,
/// a segment that vanishes (merged by another process) or a tail that was sealed between
/// listing and reading makes the reader list again.
struct LogReader {
    let layout: StoreLayout

    struct Outcome {
        var appliedOperations: UInt64 = 0
        var warnings: [StoreWarning] = []
        /// Set when a record was found damaged after some of its commits were applied (only
        /// when decoding ahead, ``rebuild()``).
        var appliedPartOfDamagedRecord = false
    }

    /// Files at least this long are decoded ahead by ``rebuild()``; below it, handing chunks
    /// between threads costs about what the overlap saves.
    static let decodingAheadMinimumBytes = 64 << 10

    /// Rebuilds the state from the logs alone. Each file is decoded on a second thread while
    /// this one applies what has been decoded, so a large log is read and applied at once.
    /// If a record turns out damaged after some of its commits were applied, the rebuild
    /// starts again decoding every record whole before applying it, so that a damaged record
    /// contributes nothing (log-format.md, "Reader rules").
    /// - Parameter tails: receives the marks of the tails read (as ``catchUp(_:limit:tails:decodingAhead:onCommit:)`` leaves them).
    func rebuild(tails: inout [ReplicaID: TailMark]) throws(StoreError) -> (state: TaskState, outcome: Outcome) {
        var state = TaskState()
        var marks: [ReplicaID: TailMark] = [:]
        let outcome = try catchUp(&state, tails: &marks, decodingAhead: true)
        if !outcome.appliedPartOfDamagedRecord {
            tails = marks
            return (state, outcome)
        }
        var again = TaskState()
        marks = [:]
        let outcomeAgain = try catchUp(&again, tails: &marks)
        tails = marks
        return (again, outcomeAgain)
    }

    func rebuild() throws(StoreError) -> (state: TaskState, outcome: Outcome) {
        var marks: [ReplicaID: TailMark] = [:]
        return try rebuild(tails: &marks)
    }

    /// Applies to `state` every commit in the logs it lacks, in each replica's order.
    /// - Parameters:
    ///   - limit: when given, commits past this version are not applied.
    ///   - onCommit: called for each commit applied.
    func catchUp(
        _ state: inout TaskState, limit: VersionVector? = nil, onCommit: ((ReplicaID, Commit) -> Void)? = nil
    ) throws(StoreError) -> Outcome {
        var marks: [ReplicaID: TailMark] = [:]
        return try catchUp(&state, limit: limit, tails: &marks, onCommit: onCommit)
    }

    /// Like ``catchUp(_:limit:onCommit:)``, skipping tails that have not changed since the
    /// marks were taken (the state already holds all they had).
    func catchUp(
        _ state: inout TaskState, limit: VersionVector? = nil, tails: inout [ReplicaID: TailMark],
        decodingAhead: Bool = false, onCommit: ((ReplicaID, Commit) -> Void)? = nil
    ) throws(StoreError) -> Outcome {
        var outcome = Outcome()
        for name in try Posix.list(layout.logsDirectory).sorted() where !name.hasPrefix(".") {
            guard let replica = ReplicaID(hex: name), name == replica.hex,
                Posix.isDirectory(Posix.join(layout.logsDirectory, name))
            else {
                outcome.warnings.append(
                    StoreWarning(path: Posix.join(layout.logsDirectory, name),
                                 message: "not a replica log folder; ignored"))
                continue
            }
            try catchUp(
                &state, replica: replica, limit: limit, outcome: &outcome, tails: &tails, decodingAhead: decodingAhead,
                onCommit: onCommit)
        }
        return outcome
    }

    private func catchUp(
        _ state: inout TaskState, replica: ReplicaID, limit: VersionVector?, outcome: inout Outcome,
        tails: inout [ReplicaID: TailMark], decodingAhead: Bool, onCommit: ((ReplicaID, Commit) -> Void)?
    ) throws(StoreError) {
        let maxSeq = limit.map { $0[replica] } ?? .max
        var applied: UInt64 = 0
        var mark = tails[replica]
        defer { tails[replica] = mark }
        try forEachCommit(
            of: replica, after: state.version[replica], through: maxSeq, outcome: &outcome, tail: &mark,
            decodingAhead: decodingAhead
        ) { run in
            // No one reads the commits afterwards unless `onCommit` is given: their values are
            // then moved into the state, not copied.
            let taken = onCommit == nil ? state.apply(taking: run, from: replica) : state.apply(run, from: replica)
            guard taken > 0 else { return run.isEmpty }
            let done = run.prefix(taken)
            applied += done.last!.endSeq - done.first!.firstSeq  // a run's commits follow on one another
            if let onCommit { for c in done { onCommit(replica, c) } }
            return taken == run.count
        }
        outcome.appliedOperations += applied
    }

    /// The commit of `replica` whose last operation is `seq`, if a readable file holds it.
    func commit(of replica: ReplicaID, endingAt seq: UInt64) throws(StoreError) -> Commit? {
        let dir = layout.logDirectory(replica)
        var candidates = [layout.tailFile(replica)]
        for name in try Posix.list(dir) {
            if let s = SealedName(fileName: name), s.first <= seq, seq <= s.last { candidates.append(Posix.join(dir, name)) }
        }
        for path in candidates {
            if let bytes = try Posix.readFile(path), let c = SegmentCodec.commit(endingAt: seq, in: bytes) { return c }
        }
        return nil
    }

    /// The commits of `replica` after sequence number `start`, in order, as far as they are
    /// contiguous (and no further than `maxSeq`).
    /// - Parameter previous: when given, also receives the commit ending exactly at `start`
    ///   if it lies in a file read anyway (one pass instead of two).
    func commits(
        of replica: ReplicaID, after start: UInt64, through maxSeq: UInt64 = .max, previous: ((Commit) -> Void)? = nil
    ) throws(StoreError) -> (commits: [Commit], outcome: Outcome) {
        var out: [Commit] = []
        var outcome = Outcome()
        var mark: TailMark?
        try forEachCommit(of: replica, after: start, through: maxSeq, outcome: &outcome, tail: &mark, previous: previous) {
            out.append(contentsOf: $0)
            return true
        }
        return (out, outcome)
    }

    /// Visits the commits of `replica` after `start` in sequence order, a run of commits that
    /// follow on one another at a time (applying a run extends the version vector once);
    /// `visit` returns false to stop.
    private func forEachCommit(
        of replica: ReplicaID, after start: UInt64, through maxSeq: UInt64, outcome: inout Outcome,
        tail mark: inout TailMark?, previous: ((Commit) -> Void)? = nil, decodingAhead: Bool = false,
        _ visit: (ArraySlice<Commit>) -> Bool
    ) throws(StoreError) {
        let dir = layout.logDirectory(replica)
        var have = start
        var wantsPrevious = previous != nil && start > 0
        for attempt in 0..<4 {
            var raced = false
            var stopped = false
            /// The length of the tail as read, if it read clean to its end.
            var tailReadClean: Int?
            var warnings: [StoreWarning] = []
            let names = try Posix.list(dir)
            var sealed: [SealedName] = []
            for n in names where !n.hasPrefix(".") {
                if let s = SealedName(fileName: n) {
                    sealed.append(s)
                } else if n != StoreLayout.tailName && !n.hasPrefix(StoreLayout.tailName + ".damaged") {
                    warnings.append(StoreWarning(path: Posix.join(dir, n), message: "not a segment file name; ignored"))
                }
            }
            sealed.sort(by: SealedName.readingOrder)

            /// Reads one file; false if it vanished.
            func read(_ path: String, expectKind: SegmentHeader.Kind, expectFirst: UInt64?) throws(StoreError) -> Bool {
                guard let bytes = try Posix.readFile(path) else { return false }
                func matches(_ header: SegmentHeader) -> Bool {
                    header.replica == replica.bytes && header.kind == expectKind
                        && (expectFirst.map { $0 == header.firstSeq } ?? true)
                }
                let streamed: SegmentCodec.Streamed
                do {
                    // Records this reader already holds are checked but not decoded.
                    streamed = try SegmentCodec.stream(
                        bytes, skipThrough: wantsPrevious && have == start ? start - 1 : have, needsLatestTime: false,
                        accept: { matches($0) && !(expectKind == .tail && $0.firstSeq > have + 1) },
                        decodingAhead: decodingAhead && bytes.count >= Self.decodingAheadMinimumBytes
                    ) { commits in
                        if wantsPrevious && have == start, let p = commits.first(where: { $0.endSeq - 1 == start }) {
                            previous?(p)
                            wantsPrevious = false
                        }
                        var i = commits.startIndex
                        while i < commits.endIndex {
                            let c = commits[i]
                            if c.endSeq - 1 <= have {
                                i += 1
                                continue
                            }
                            if c.firstSeq != have + 1 {
                                warnings.append(StoreWarning(
                                    path: path, message: "a commit at \(c.firstSeq)...\(c.endSeq - 1) overlaps the operations up to \(have) without lining up; later operations of this replica were not applied"))
                            }
                            guard c.endSeq - 1 <= maxSeq, c.firstSeq == have + 1 else {
                                stopped = true
                                return false
                            }
                            // The commits from here that follow on one another are visited together.
                            var end = i + 1
                            var through = c.endSeq - 1
                            while end < commits.endIndex, commits[end].firstSeq == through + 1, commits[end].endSeq - 1 <= maxSeq {
                                through = commits[end].endSeq - 1
                                end += 1
                            }
                            guard visit(commits[i..<end]) else {
                                stopped = true
                                return false
                            }
                            have = through
                            i = end
                        }
                        return true
                    }
                } catch {
                    warnings.append(StoreWarning(path: path, message: "\(error); file skipped"))
                    return true
                }
                let contents = streamed.contents
                guard matches(contents.header) else {
                    warnings.append(StoreWarning(path: path, message: "header does not match the file's name or folder; file skipped"))
                    return true
                }
                if !streamed.accepted {
                    raced = true  // a tail sealed between listing and reading: list again
                    return true
                }
                if streamed.visitedPartOfDamagedRecord { outcome.appliedPartOfDamagedRecord = true }
                if expectKind == .tail, contents.scan.ending == .clean { tailReadClean = bytes.count }
                if let d = contents.damage {
                    // A writer copying records into its tail through memory can be caught
                    // mid-copy: read again before calling it damage.
                    if expectKind == .tail && attempt < 3 {
                        raced = true
                        return true
                    }
                    warnings.append(StoreWarning(
                        path: path,
                        message: "damaged record at byte \(d.offset): \(d.reason); operations after it in this file were not read"))
                }
                return true
            }

            for s in sealed where !stopped {
                if s.last <= have || have >= maxSeq { continue }
                if s.first > have + 1 {
                    if attempt == 3 {
                        warnings.append(StoreWarning(
                            path: dir, message: "operations \(have + 1)...\(s.first - 1) are missing (no segment holds them); later ones cannot be applied until they are synced"))
                    }
                    raced = true
                    break
                }
                if try !read(Posix.join(dir, s.fileName), expectKind: .sealed, expectFirst: s.first) {
                    raced = true
                    break
                }
            }
            if !raced && !stopped && have < maxSeq {
                let now = TailMark(path: layout.tailFile(replica))
                if now == nil || now != mark {
                    _ = try read(layout.tailFile(replica), expectKind: .tail, expectFirst: nil)
                    // Remembered only when the whole file as stat'ed was read clean: a tail
                    // read as torn may be a writer's reserved space (its size says nothing of
                    // what is appended next), and a writer giving space back shrinks the file,
                    // so a size seen before the read may come back holding more.
                    mark = raced || stopped || tailReadClean != now.map({ Int($0.size) }) ? nil : now
                }
            }
            if !raced || attempt == 3 {
                if raced && !warnings.contains(where: { $0.path == dir }) {
                    warnings.append(StoreWarning(
                        path: dir, message: "operations after \(have) are missing: the files changed while being read, or a segment is missing"))
                }
                outcome.warnings += warnings
                return
            }
        }
    }
}

/// What a tail file was when it was last read whole: if it is still the same file with the
/// same size, reading it again would find nothing new.
struct TailMark: Equatable, Sendable {
    var inode: UInt64
    var size: Int64

    init(inode: UInt64, size: Int64) {
        self.inode = inode
        self.size = size
    }

    init?(path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
    }
}
