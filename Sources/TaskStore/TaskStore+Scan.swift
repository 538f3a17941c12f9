#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CRDTCore
import OpLogFormat
import TaskModel

extension TaskStore {
    /// Hands the tasks matching `query` to `body` one at a time, like ``forEachTask(_:_:)``,
    /// but reads them straight from the snapshot, merged with the log after it, without
    /// loading the state: for a process that lists the store once (a command-line listing),
    /// which then touches a fraction of the memory. The state is loaded as usual instead
    /// when it is loaded already, the sort is not by creation, the snapshot is missing,
    /// unreadable or not in creation order, or the log after it is long (loading then saves
    /// a fresh snapshot) or adds a task older than the snapshot's latest operation.
    /// - Throws: ``StoreError/damagedSnapshot(path:reason:)`` when the snapshot turns out
    ///   damaged after tasks were handed out (it is removed; listing again loads from the logs).
    public func scanTasks(_ query: TaskQuery, _ body: (TaskItem) -> Void) throws(StoreError) {
        let prepared = query.sort == .created ? try savedListing() : nil
        guard let (saved, head, after, _) = prepared else { return try forEachTask(query, body) }
        var handedOut = false
        do {
            try after.forEachTask(query, mergingSaved: saved, head: head) { task in
                handedOut = true
                body(task)
            }
        } catch {
            guard handedOut else { return try forEachTask(query, body) }
            unlink(layout.snapshotFile)
            throw .damagedSnapshot(path: layout.snapshotFile, reason: "\(error)")
        }
    }

    /// The live tasks among `ids`. When the state is not loaded they are read from the
    /// snapshot merged with the log after it, as ``scanTasks(_:_:)`` does (a command that
    /// edits one task need not load them all): found through the snapshot's task index, or
    /// else by stepping over every other task. Otherwise, or when the snapshot cannot be
    /// read so, from the state.
    /// - Note: through the index, a task the index does not list counts as not saved: callers
    ///   take an absent task as a reason to look again in the state, never as an answer.
    func liveTasks(_ ids: Set<TaskID>) throws(StoreError) -> [TaskID: TaskItem] {
        if let (saved, head, after, index) = try savedListing() {
            if let index, let found = try? StateCodec.tasks(at: ids.flatMap { id in index.offsets(of: id).map { (id, $0) } }, in: saved) {
                return after.liveTasks(ids, saved: found, head: head)
            }
            if let found = try? after.liveTasks(ids, mergingSaved: saved, head: head) { return found }
        }
        return try withState { state in
            var found: [TaskID: TaskItem] = [:]
            for id in ids { if state.isLive(id), let t = state.task(id) { found[id] = t } }
            return found
        }
    }

    /// A snapshot's body and head, and the state of the log after it: what is read instead of
    /// the state.
    typealias SavedListing = (saved: ArraySlice<UInt8>, head: StateCodec.Head, after: TaskState, index: Snapshot.TaskIndex?)

    /// What to read instead of the state, or nil when the state is loaded already or must be
    /// loaded.
    private func savedListing() throws(StoreError) -> SavedListing? {
        try inner.withLock { (inner) throws(StoreError) -> SavedListing? in
            inner.state == nil ? try prepareScan(&inner) : nil
        }
    }

    /// ``savedListing()`` under the lock: nil when the snapshot cannot be read one task at a
    /// time or the log after it is long.
    private func prepareScan(_ inner: inout Inner) throws(StoreError) -> SavedListing? {
        try followIdentityFile(&inner)
        try finishInterruptedRewrite(&inner)
        guard let bytes = try Posix.readFile(layout.snapshotFile),
            let (saved, inCreationOrder, index) = try? Snapshot.body(of: bytes), inCreationOrder,
            let head = try? StateCodec.head(of: saved)
        else { return nil }
        var after = TaskState(continuing: head)
        var marks: [ReplicaID: TailMark] = [:]  // the state is not kept, nor are the marks
        let outcome = try LogReader(layout: layout).catchUp(&after, tails: &marks)
        guard outcome.appliedOperations <= options.snapshotAfterOperations, after.followsInCreationOrder(head) else {
            return nil
        }
        inner.note(outcome.warnings)
        return (saved, head, after, index)
    }
}
