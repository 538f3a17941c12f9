@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

/// What the logs hold: compaction, replay, verification, history and status.
extension TaskStore {
    /// Seals the tail, merges this replica's segments and saves a snapshot rebuilt from the
    /// logs. A tail damaged in
    /// the middle is rescued: its readable operations are kept and the file is set aside.
    /// - Returns: the warnings met (files set aside).
    @discardableResult
    public func compact() throws(StoreError) -> [StoreWarning] {
        try inner.withLock { (inner) throws(StoreError) -> [StoreWarning] in
            try holdingLock(&inner) { (inner) throws(StoreError) -> [StoreWarning] in
                Posix.removeStaleTemporaries(in: path)
                for dir in (try? Posix.list(layout.logsDirectory)) ?? [] {
                    Posix.removeStaleTemporaries(in: Posix.join(layout.logsDirectory, dir))
                }
                var warnings = try inner.writer.seal(rescueDamage: true)
                try inner.writer.mergeSealed(mergeEverything: true)
                // The snapshot is rebuilt from the logs alone, the source of truth.
                let rebuilt = try LogReader(layout: layout).rebuild()
                warnings += rebuilt.outcome.warnings
                inner.state = rebuilt.state
                try saveSnapshot(&inner)
                return warnings
            }
        }
    }

    /// Rebuilds the state from the logs alone, ignoring the snapshot.
    public func replay() throws(StoreError) -> (state: TaskState, warnings: [StoreWarning]) {
        let rebuilt = try LogReader(layout: layout).rebuild()
        return (rebuilt.state, rebuilt.outcome.warnings)
    }

    /// Checks the saved snapshot against the logs: the snapshot brought up to date from the
    /// logs, as opening the store does, must equal the logs replayed from nothing.
    /// - Returns: the operations checked, which ``status()`` counts too, and how many of them
    ///   the snapshot held (nil when there is no snapshot yet).
    /// - Throws: ``StoreError/verificationFailed(differences:)`` on any difference.
    public func verify() throws(StoreError) -> (operations: UInt64, saved: UInt64?) {
        var rebuilt = TaskState()
        _ = try LogReader(layout: layout).catchUp(&rebuilt)
        guard let bytes = try Posix.mapFile(layout.snapshotFile), !Snapshot.isOlderVersion(bytes) else {
            return (rebuilt.version.operationCount, nil)
        }
        var served: TaskState
        switch Snapshot.decode(bytes) {
        case .success(let s): served = s
        case .failure(let e): throw .verificationFailed(differences: ["the snapshot is unreadable: \(e)"])
        }
        let saved = served.version.operationCount
        _ = try LogReader(layout: layout).catchUp(&served)
        let differences = StateDifference.list(expected: rebuilt, actual: served)
        guard differences.isEmpty else { throw .verificationFailed(differences: differences) }
        return (served.version.operationCount, saved)
    }

    /// Every commit in the logs, oldest first (by hybrid-clock time, then replica, then sequence).
    package func history() throws(StoreError) -> [(replica: ReplicaID, commit: Commit)] {
        var all: [(replica: ReplicaID, commit: Commit)] = []
        var scratch = TaskState()
        _ = try LogReader(layout: layout).catchUp(&scratch) { all.append(($0, $1)) }
        return all.sorted {
            Stamp(time: $0.commit.time, operation: OperationID(replica: $0.replica, seq: $0.commit.firstSeq))
                < Stamp(time: $1.commit.time, operation: OperationID(replica: $1.replica, seq: $1.commit.firstSeq))
        }
    }

    /// Where the seed of this device's signing key lives (made with the store).
    package var deviceKeyPath: String { layout.deviceKeyFile }

    /// Counts and sizes of what the store holds.
    public func status() throws(StoreError) -> StoreStatus {
        let (version, tasks) = try withState { ($0.version, $0.liveCount) }
        var bytes = 0
        var segments = 0
        for name in [layout.identityFile, layout.snapshotFile, layout.planFile, layout.lockFile] {
            bytes += Posix.fileSize(name) ?? 0
        }
        for dir in try Posix.list(layout.logsDirectory) {
            let d = Posix.join(layout.logsDirectory, dir)
            for f in try Posix.list(d) where !f.hasPrefix(".") {
                bytes += Posix.fileSize(Posix.join(d, f)) ?? 0
                if SealedName(fileName: f) != nil || f == StoreLayout.tailName { segments += 1 }
            }
        }
        return StoreStatus(
            replica: replica, version: version, operations: version.operationCount, tasks: tasks,
            bytes: bytes, segments: segments)
    }
}

/// What `tasklog status` shows.
public struct StoreStatus: Sendable, Equatable {
    public var replica: ReplicaID
    public var version: VersionVector
    public var operations: UInt64
    public var tasks: Int
    public var bytes: Int
    public var segments: Int
}
