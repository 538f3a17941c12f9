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
        var latestTime: Timestamp = .zero
        var warnings: [StoreWarning] = []
    }

    /// Applies to `state` every commit in the logs it lacks, in each replica's order.
    /// - Parameters:
    ///   - limit: when given, commits past this version are not applied.
    ///   - onCommit: called for each commit applied.
    func catchUp(
        _ state: inout TaskState, limit: VersionVector? = nil,
        onCommit: (ReplicaID, Commit) -> Void = { _, _ in }
    ) throws(StoreError) -> Outcome {
        var outcome = Outcome()
        for name in try Posix.list(layout.logsDirectory).sorted() where !name.hasPrefix(".") {
            guard let replica = ReplicaID(hex: name), name == replica.hex else {
                outcome.warnings.append(
                    StoreWarning(path: Posix.join(layout.logsDirectory, name),
                                 message: "not a replica log folder; ignored"))
                continue
            }
            try catchUp(&state, replica: replica, limit: limit, outcome: &outcome, onCommit: onCommit)
        }
        return outcome
    }

    private func catchUp(
        _ state: inout TaskState, replica: ReplicaID, limit: VersionVector?, outcome: inout Outcome,
        onCommit: (ReplicaID, Commit) -> Void
    ) throws(StoreError) {
        let dir = layout.logDirectory(replica)
        let maxSeq = limit.map { $0[replica] } ?? .max
        for attempt in 0..<4 {
            var raced = false
            var warnings: [StoreWarning] = []
            let names = try Posix.list(dir)
            var sealed: [SealedName] = []
            for n in names where !n.hasPrefix(".") {
                if let s = SealedName(fileName: n) {
                    sealed.append(s)
                } else if n != "tail.tlog" && !n.hasPrefix("tail.tlog.damaged") {
                    warnings.append(StoreWarning(path: Posix.join(dir, n), message: "not a segment file name; ignored"))
                }
            }
            sealed.sort { $0.first != $1.first ? $0.first < $1.first : $0.last > $1.last }

            func apply(_ path: String, expectKind: SegmentHeader.Kind, expectFirst: UInt64?) throws(StoreError) -> Bool {
                guard let bytes = try Posix.readFile(path) else { return false }
                let contents: SegmentCodec.Contents
                do {
                    contents = try SegmentCodec.read(bytes)
                } catch {
                    warnings.append(StoreWarning(path: path, message: "\(error); file skipped"))
                    return true
                }
                guard contents.header.replica == replica.bytes, contents.header.kind == expectKind,
                    expectFirst.map({ $0 == contents.header.firstSeq }) ?? true
                else {
                    warnings.append(StoreWarning(path: path, message: "header does not match the file's name or folder; file skipped"))
                    return true
                }
                if contents.header.firstSeq > state.version[replica] + 1 && expectKind == .tail {
                    raced = true
                    return true
                }
                if contents.latestTime > outcome.latestTime { outcome.latestTime = contents.latestTime }
                for c in contents.commits where c.endSeq - 1 <= maxSeq && c.endSeq - 1 > state.version[replica] {
                    guard state.apply(c, from: replica) else { break }
                    outcome.appliedOperations += UInt64(c.operations.count)
                    onCommit(replica, c)
                }
                if let d = contents.damage {
                    warnings.append(StoreWarning(
                        path: path,
                        message: "damaged record at byte \(d.offset): \(d.reason); operations after it in this file were not read"))
                }
                return true
            }

            for s in sealed {
                let have = state.version[replica]
                if s.last <= have || have >= maxSeq { continue }
                if s.first > have + 1 { break }
                if try !apply(Posix.join(dir, s.fileName), expectKind: .sealed, expectFirst: s.first) {
                    raced = true
                    break
                }
            }
            if !raced && state.version[replica] < maxSeq {
                _ = try apply(layout.tailFile(replica), expectKind: .tail, expectFirst: nil)
            }
            if !raced || attempt == 3 {
                outcome.warnings += warnings
                return
            }
        }
    }
}
