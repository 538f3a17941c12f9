@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// Logs gathered from any folder (a store, a shared folder, files attached to a bug report),
/// to rebuild or step through the state they describe without touching a store.
///
/// ```swift
/// let logs = try LogReplay.load(from: "/path/to/attached/logs")
/// let now = logs.state()                               // everything
/// let then = logs.state(until: .time(Timestamp(physical: 1_767_225_600_000)))
/// for step in logs.steps { … }                         // commits in clock order
/// ```
public struct LogReplay: Sendable {
    /// One commit of one replica.
    public struct Step: Sendable {
        public var replica: ReplicaID
        public var commit: Commit
    }

    /// Where a replay stops.
    public enum Limit: Sendable, Equatable {
        /// Commits at or before this clock time.
        case time(Timestamp)
        /// This replica's commits up to and including `seq`, and every commit of other
        /// replicas made no later (by clock) than that one.
        case operation(ReplicaID, seq: UInt64)
    }

    /// Each replica's contiguous commits, from sequence number 1.
    public private(set) var commits: [ReplicaID: [Commit]] = [:]
    /// Files that were not usable, with why.
    public private(set) var skipped: [StoreWarning] = []

    public init() {}

    /// Reads every segment file under `folder` (any depth; names do not matter).
    public static func load(from folder: String) throws(StoreError) -> LogReplay {
        guard Posix.isDirectory(folder) else { throw .storeNotFound(path: folder) }
        var found: [ReplicaID: [UInt64: Commit]] = [:]  // by first sequence number
        var forkedAt: [ReplicaID: UInt64] = [:]  // the first sequence number with two commits
        var replay = LogReplay()
        var pending = [folder]
        while let dir = pending.popLast() {
            for name in try Posix.list(dir).sorted() where !name.hasPrefix(".") {
                let path = Posix.join(dir, name)
                if Posix.isDirectory(path) {
                    pending.append(path)
                    continue
                }
                guard name.hasSuffix(".tlog") || name.contains(".tlog."), let bytes = try Posix.readFile(path) else { continue }
                let contents: SegmentCodec.Contents
                do {
                    contents = try SegmentCodec.read(bytes)
                } catch {
                    replay.skipped.append(StoreWarning(path: path, message: "\(error)"))
                    continue
                }
                if let d = contents.damage {
                    replay.skipped.append(StoreWarning(path: path, message: "damaged record at byte \(d.offset) (\(d.reason)); the operations before it were used"))
                }
                let replica = ReplicaID(bytes: contents.header.replica)
                for c in contents.commits {
                    if let other = found[replica]?[c.firstSeq], other != c {
                        forkedAt[replica] = min(forkedAt[replica] ?? .max, c.firstSeq)
                    }
                    found[replica, default: [:]][c.firstSeq] = c
                }
            }
        }
        for (replica, byFirst) in found {
            var chain: [Commit] = []
            var next: UInt64 = 1
            // Two branches of one replica (a fork, Spec/sync-folder.md "Forks") are never mixed:
            // only what they share is used.
            let end = forkedAt[replica] ?? .max
            while next < end, let c = byFirst[next] {
                chain.append(c)
                next = c.endSeq
            }
            if let seq = forkedAt[replica] {
                replay.skipped.append(StoreWarning(
                    path: folder, message: "replica \(replica): two different commits at sequence number \(seq), a fork; only the operations before it were used. Sync the stores these logs came from (tasklog sync) to settle it, then replay"))
            } else if byFirst.values.contains(where: { $0.firstSeq >= next }) {
                replay.skipped.append(StoreWarning(
                    path: folder, message: "replica \(replica): operations from \(next) on are not contiguous and were not used"))
            }
            replay.commits[replica] = chain
        }
        return replay
    }

    /// Every commit in clock order (time, then replica, then sequence number): an order that
    /// respects each replica's own order, for stepping through.
    public var steps: [Step] {
        commits.flatMap { r, cs in cs.map { Step(replica: r, commit: $0) } }.sorted {
            Stamp(time: $0.commit.time, operation: OperationID(replica: $0.replica, seq: $0.commit.firstSeq))
                < Stamp(time: $1.commit.time, operation: OperationID(replica: $1.replica, seq: $1.commit.firstSeq))
        }
    }

    /// The state the logs describe, up to `limit`.
    public func state(until limit: Limit? = nil) -> TaskState {
        var state = TaskState()
        let cutoff: Stamp?
        switch limit {
        case nil: cutoff = nil
        case .time(let t): cutoff = Stamp(time: t, operation: OperationID(replica: ReplicaID(high: .max, low: .max), seq: .max))
        case .operation(let r, let seq):
            guard let c = commits[r]?.first(where: { $0.firstSeq <= seq && seq < $0.endSeq }) else { return state }
            cutoff = Stamp(time: c.time, operation: OperationID(replica: r, seq: c.firstSeq))
        }
        for step in steps {
            if let cutoff, Stamp(time: step.commit.time, operation: OperationID(replica: step.replica, seq: step.commit.firstSeq)) > cutoff {
                break
            }
            state.apply(step.commit, from: step.replica)
        }
        return state
    }

    /// Every operation that touched `task`, in clock order, with its stamp.
    public func history(of task: TaskID) -> [(stamp: Stamp, operation: TaskOperation)] {
        var out: [(Stamp, TaskOperation)] = []
        for step in steps {
            for (i, op) in step.commit.operations.enumerated() where op.task == task {
                out.append((Stamp(time: step.commit.time, operation: OperationID(replica: step.replica, seq: step.commit.firstSeq + UInt64(i))), op))
            }
        }
        return out
    }
}
