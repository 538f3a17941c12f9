#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

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
