@_spi(Engine) import OpLogFormat
@_spi(Engine) import CRDTCore
import Synchronization
@_spi(Engine) import TaskModel

/// What ``TaskStore/undo()`` reverted.
public struct UndoneChange: Sendable, Equatable {
    /// The name the change was recorded under (``TaskStore/undoable(_:_:)``).
    public var name: String
    /// The tasks the change wrote, as they are after the undo, in the order it first wrote them.
    public var tasks: [TaskItem]
    /// Per task, the fields left as they are because they no longer hold what the change
    /// wrote (another device, or a change not recorded, wrote them since): `title`, `notes`,
    /// `done`, `priority`, `due`, `list`, `meta.KEY`.
    public var keptFields: [TaskID: [String]]
}

/// The changes being recorded on the current thread (or task), one per store.
enum UndoRecording {
    @TaskLocal static var open: [UndoGroup] = []
}

/// The operations one change recording made so far, as ranges of this replica's sequence numbers.
final class UndoGroup: Sendable {
    let store: ObjectIdentifier
    let ranges = Mutex<[ClosedRange<UInt64>]>([])

    init(store: ObjectIdentifier) { self.store = store }

    func note(_ commit: Commit) {
        guard commit.endSeq > commit.firstSeq else { return }
        ranges.withLock { ranges in
            if let last = ranges.last, last.upperBound + 1 == commit.firstSeq {
                ranges[ranges.count - 1] = last.lowerBound...(commit.endSeq - 1)
            } else {
                ranges.append(commit.firstSeq...(commit.endSeq - 1))
            }
        }
    }
}

extension TaskStore {
    /// Runs `body` as one change that ``undo()`` can revert, named `name` (one line; the
    /// command line uses its command's word, such as `done`). Every commit `body` makes on
    /// this store, from this thread or task, belongs to the change; a nested call joins the
    /// outer one. Only the commits' sequence numbers are recorded (a few bytes, not synced);
    /// a change that commits nothing is not recorded.
    ///
    /// ```swift
    /// let store = try TaskStore.open(at: folder)
    /// let milk = try store.undoable("add") { try store.add(NewTask(title: "Buy milk")) }
    /// try store.undoable("done") { try store.complete([milk.id]) }
    /// if let undone = try store.undo() {  // reopens the task
    ///     print(undone.name, undone.tasks.map(\.isDone))  // done [false]
    /// }
    /// ```
    public func undoable<R, E: Error>(_ name: String, _ body: () throws(E) -> R) throws(E) -> R {
        let me = ObjectIdentifier(self)
        if UndoRecording.open.contains(where: { $0.store == me }) { return try body() }
        let group = UndoGroup(store: me)
        undoGroupsOpen.add(1, ordering: .relaxed)
        let result = UndoRecording.$open.withValue(UndoRecording.open + [group]) { Result { () throws(E) -> R in try body() } }
        undoGroupsOpen.subtract(1, ordering: .relaxed)
        let ranges = group.ranges.withLock { $0 }
        if !ranges.isEmpty {
            UndoStack(path: layout.undoFile).push(.init(name: name, ranges: ranges), replica: replica)
        }
        return try result.get()
    }

    /// Notes `commits`, just written, in the change this thread records on this store, if any.
    func noteForUndo(_ commits: some Collection<Commit>) {
        guard undoGroupsOpen.load(ordering: .relaxed) > 0,
            let group = UndoRecording.open.first(where: { $0.store == ObjectIdentifier(self) })
        else { return }
        for c in commits { group.note(c) }
    }

    /// Reverts this device's newest change recorded by ``undoable(_:_:)`` and not yet undone,
    /// by writing the earlier values back as new operations, in one commit (so it syncs like
    /// any edit; the undo itself is not recorded). A field that no longer holds what the
    /// change wrote is left, and named in ``UndoneChange/keptFields``. Calling it again
    /// reverts the change before. The earlier values are read from the logs, compacted or not.
    /// - Returns: what was reverted; nil when no recorded change is left (or the stack names
    ///   another replica id: a fork resolution gave this device a new one).
    /// - Throws: ``StoreError/undoUnavailable(name:reason:)`` when the logs no longer hold the
    ///   change; it is then taken off the stack, so the next call reverts the one before.
    @discardableResult
    public func undo() throws(StoreError) -> UndoneChange? {
        let stack = UndoStack(path: layout.undoFile)
        // A stack naming another replica id predates a fork resolution that moved this
        // device's operations to a new id: its sequence numbers now name others' commits.
        guard let found = stack.load(), found.replica == replica, let entry = found.entries.last else { return nil }
        let commits = try recordedCommits(entry.ranges, of: found.replica)
        guard let commits else {
            try stack.drop(entry)
            throw .undoUnavailable(
                name: entry.name, reason: "the logs no longer hold its operations (replica \(found.replica.hex))")
        }
        var touched: [TaskID] = []
        var seen = Set<TaskID>()
        for c in commits { for op in c.operations { if let id = op.task, seen.insert(id).inserted { touched.append(id) } } }
        let start = Stamp(time: commits.first!.time, operation: OperationID(replica: found.replica, seq: commits.first!.firstSeq))
        let end = Stamp(time: commits.last!.time, operation: OperationID(replica: found.replica, seq: commits.last!.endSeq - 1))
        let (before, after) = try statesAround(start: start, end: end, of: seen)
        var patches: [TaskPatch] = []
        var kept: [TaskID: [String]] = [:]
        for id in touched {
            guard let written = after.task(id), let now = try task(id) else { continue }
            let plan = UndoPlan(before: before.task(id), after: written, current: now)
            if plan.writes { patches.append(plan.patch) }
            if !plan.left.isEmpty { kept[id] = plan.left }
        }
        try stack.drop(entry)
        if !patches.isEmpty { try apply(patches) }
        var now: [TaskItem] = []
        for id in touched { if let t = try task(id) { now.append(t) } }
        return UndoneChange(name: entry.name, tasks: now, keptFields: kept)
    }

    /// The commits of `replica` that cover exactly `ranges`, in order; nil when the logs lack one.
    private func recordedCommits(_ ranges: [ClosedRange<UInt64>], of replica: ReplicaID) throws(StoreError) -> [Commit]? {
        var out: [Commit] = []
        for r in ranges {
            let found = try LogReader(layout: layout).commits(of: replica, after: r.lowerBound - 1, through: r.upperBound).commits
            guard found.first?.firstSeq == r.lowerBound, found.last?.endSeq == r.upperBound + 1 else { return nil }
            out += found
        }
        return out
    }

    /// The tasks `tasks` folded from every operation on them in the logs stamped before
    /// `start`, and from those stamped at most `end`: the tasks before and after a change.
    /// Registers and sets give the same result in any order of operations, so none is needed.
    /// When every operation the snapshot holds is older than the change, the fold starts from
    /// the saved tasks (read through its task index) and reads only the logs after it.
    private func statesAround(start: Stamp, end: Stamp, of tasks: Set<TaskID>) throws(StoreError) -> (TaskState, TaskState) {
        var (before, after) = (TaskState(), TaskState())
        var since = VersionVector()
        let saved = try readingSaved { (saved) throws(DecodeError) -> (TaskState, VersionVector)? in
            guard saved.file.head.latestTime < start.time, let records = try Self.savedRecords(tasks, saved) else { return nil }
            let tombstones = saved.file.head.tombstoneCount > 0 ? try saved.file.tombstones() : []
            return (Self.partialState(records, tombstones: tombstones), saved.file.head.version)
        }
        if let (state, version) = saved {
            (before, after, since) = (state, state, version)
        }
        try forEachOperation(on: tasks, after: since) { op, stamp in
            if stamp < start { before.apply(op, stamp: stamp) }
            if stamp <= end { after.apply(op, stamp: stamp) }
        }
        return (before, after)
    }

    /// Hands `body` every operation on `tasks` in the logs past `version`, with its stamp.
    private func forEachOperation(
        on tasks: Set<TaskID>, after version: VersionVector, _ body: (TaskOperation, Stamp) -> Void
    ) throws(StoreError) {
        let reader = LogReader(layout: layout)
        for name in try Posix.list(layout.logsDirectory) {
            guard let replica = ReplicaID(hex: name), name == replica.hex else { continue }
            var outcome = LogReader.Outcome()
            var mark: TailMark?
            try reader.forEachCommit(of: replica, after: version[replica], through: .max, outcome: &outcome, tail: &mark) { run in
                for c in run {
                    for (i, op) in zip(c.firstSeq..., c.operations) where op.task.map(tasks.contains) == true {
                        body(op, Stamp(time: c.time, operation: OperationID(replica: replica, seq: i)))
                    }
                }
                return true
            }
        }
    }
}
