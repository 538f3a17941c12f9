@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

// Listing a saved state (a snapshot's body) merged with the operations after it, one task at
// a time, without building the whole state: what a process that lists once needs, in a
// fraction of the memory (Spec/log-format.md, "Snapshot file", "Listing without loading").

extension TaskState {
    /// An empty state that continues a saved one: no task, but the saved state's version and
    /// latest time, so that applying the log to it applies only what came after the saved state.
    @_spi(Engine) public init(continuing version: VersionVector, latestTime: Timestamp) {
        self = ._assemble(records: TaskTable(), membershipTombstones: [], version: version, latestTime: latestTime)
    }

    /// Whether ``forEachTask(_:mergingSaved:_:)`` can list this state (built by
    /// ``init(continuing:latestTime:)``) merged with the saved one, whose latest time is
    /// `savedLatest`: every task added here was added after the latest operation of the saved
    /// state, so it is listed after all of the saved tasks, and a saved task keeps its place.
    /// An add older than that (a sync bringing in an old task) means the state must be built whole.
    @_spi(Engine) public func followsInCreationOrder(savedLatest: Timestamp) -> Bool {
        records.withRecords { recs in !recs.contains { $0.createdAt.map { $0 <= savedLatest } ?? false } }
    }

    /// Whether this state adds live dots to one of `ids`: merging such a task with a saved
    /// one needs the saved state's tombstones.
    @_spi(Engine) public func addsDots(to ids: Set<TaskID>) -> Bool {
        ids.contains { id in records.position(of: id).map { records.live[$0] != nil } ?? false }
    }

    /// A saved task's live dots that no remove in this state named (a remove after the saved
    /// state may name any of its dots).
    @inline(__always)
    func surviving(_ savedLive: LiveDots?) -> LiveDots? {
        membershipTombstones.isEmpty ? savedLive : savedLive?.subtracting(membershipTombstones)
    }

    /// The live dots this state's task at `p` adds that the saved state had not removed.
    @inline(__always)
    func addedDots(at p: Int, _ saved: StateCodec.Head) -> LiveDots? {
        addedDots(at: p, savedTombstones: saved.membershipTombstones)
    }

    @inline(__always)
    private func addedDots(at p: Int, savedTombstones: Set<OperationID>) -> LiveDots? {
        records.live[p]?.subtracting(savedTombstones)
    }

    /// Hands to `body` the live tasks matching `query` of `saved` (an encoded state whose
    /// tasks are stored in creation order, with `head` read from it) merged with this state, in creation order and up
    /// to the query's limit: the tasks `body` would get from the merged state.
    /// - Precondition: `query.sort` is ``TaskQuery/SortKey/created`` and
    ///   ``followsInCreationOrder(savedLatest:)`` holds.
    ///   With `query.ids`, only those tasks are read and handed on; every other saved task is
    ///   stepped over.
    /// - Throws: when `saved` is damaged; `body` may have had tasks already.
    @_spi(Engine) public func forEachTask(
        _ query: TaskQuery, mergingSaved saved: SharedBytes, head: StateCodec.Head,
        _ body: (TaskItem) -> Void
    ) throws(DecodeError) {
        try withoutActuallyEscaping(body) { (body) throws(DecodeError) in
            var sink = ItemSink(body)
            try forEachTask(query, mergingSaved: saved, head: head, into: &sink)
        }
    }

    /// ``forEachTask(_:mergingSaved:head:_:)``, handing the tasks to `sink`: a saved task
    /// no later operation touched as it is read in place (``SavedTask``), any other as an item.
    @_spi(Engine) public func forEachTask<Sink: TaskSink>(
        _ query: TaskQuery, mergingSaved saved: SharedBytes, head: StateCodec.Head,
        into sink: inout Sink
    ) throws(DecodeError) {
        try withUnsafeMutablePointer(to: &sink) { (sink) throws(DecodeError) in
            var parts = [InTurn(sink: sink)]
            try forEachTask(query, mergingSaved: saved, head: head, splits: [], words: nil, into: &parts)
        }
    }

    /// Hands to `hand`, in creation order until it returns false, the tasks added after the
    /// saved state: they come after all of its tasks. `addedLater` holds the saved tasks the
    /// later operations added; `merged` marks this state's records merged with saved ones.
    func handAddedAfterSaved(
        _ addedLater: inout [(id: TaskID, record: TaskRecord)], merged: [Bool], head: StateCodec.Head, only ids: Set<TaskID>?,
        _ hand: (TaskID, UnsafePointer<TaskRecord>) -> Bool
    ) {
        var later: [(created: Timestamp, id: TaskID, position: Int, fromSaved: Bool)] = addedLater.indices.map {
            (addedLater[$0].record.createdAt ?? .zero, addedLater[$0].id, $0, true)
        }
        for p in records.indices where !merged[p] && addedDots(at: p, head) != nil {
            if let ids, !ids.contains(records.id(at: p)) { continue }
            later.append((records.values[p].createdAt ?? .zero, records.id(at: p), p, false))
        }
        later.sort { TaskQuery.createdOrder($0.created, $0.id, $1.created, $1.id) }
        for task in later {
            let more =
                task.fromSaved
                ? withUnsafePointer(to: &addedLater[task.position].record) { hand(task.id, $0) }
                : records.withRecords { hand(task.id, $0.baseAddress! + task.position) }
            if !more { return }
        }
    }

    /// The live tasks among `ids`, each with its live membership dots (what a remove must
    /// name), and the deleted ones ever added when `includingDeleted` (dots nil, the task as
    /// ``task(_:)`` gives it): what the saved state holds of them (`saved`, read through a
    /// snapshot's task index; an id it lacks is one the saved state does not have) merged with
    /// this state, as ``forEachTask(_:mergingSaved:head:_:)`` merges them. `savedTombstones`
    /// are the saved state's (only needed when ``addsDots(to:)`` holds for `ids`).
    @_spi(Engine) public func tasks(
        _ ids: Set<TaskID>, saved: [TaskID: (record: TaskRecord, live: LiveDots?)], savedTombstones: Set<OperationID>,
        includingDeleted: Bool
    ) -> [TaskID: (task: TaskItem, dots: LiveDots?)] {
        var found: [TaskID: (task: TaskItem, dots: LiveDots?)] = [:]
        for (id, (record, live)) in records(ids, saved: saved, savedTombstones: savedTombstones) {
            guard live != nil || (includingDeleted && record.createdAt != nil) else { continue }
            var record = record
            found[id] = (withUnsafePointer(to: &record) { TaskItem(id: id, recordAt: $0, isDeleted: live == nil) }, live)
        }
        return found
    }

    /// The records among `ids` of `saved` (read through a snapshot's task index, as for
    /// ``tasks(_:saved:savedTombstones:includingDeleted:)``) merged with this state, each with
    /// its live dots (nil when deleted): what the merged state's records hold of them, with
    /// every stamp. An id neither has no entry.
    @_spi(Engine) public func records(
        _ ids: Set<TaskID>, saved: [TaskID: (record: TaskRecord, live: LiveDots?)], savedTombstones: Set<OperationID>
    ) -> [TaskID: (record: TaskRecord, live: LiveDots?)] {
        var found: [TaskID: (record: TaskRecord, live: LiveDots?)] = [:]
        for id in ids {
            let p = records.position(of: id)
            var record: TaskRecord
            var live: LiveDots?
            if let s = saved[id] {
                record = s.record
                live = surviving(s.live)
                if let p { record.merge(records.values[p]) }
            } else if let p {
                record = records.values[p]
            } else {
                continue
            }
            if let p, let added = addedDots(at: p, savedTombstones: savedTombstones) {
                if live == nil { live = added } else { live!.formUnion(added) }
            }
            found[id] = (record, live)
        }
        return found
    }

    /// The live tasks among `ids` of `saved` merged with this state, as
    /// ``forEachTask(_:mergingSaved:head:_:)`` lists them; every other saved task is
    /// stepped over, not read into an item.
    @_spi(Engine) public func liveTasks(
        _ ids: Set<TaskID>, mergingSaved saved: SharedBytes, head: StateCodec.Head
    ) throws(DecodeError) -> [TaskID: TaskItem] {
        var found: [TaskID: TaskItem] = [:]
        try forEachTask(TaskQuery(status: .all, ids: ids), mergingSaved: saved, head: head) { found[$0.id] = $0 }
        return found
    }
}
