@_spi(Engine) import OpLogFormat
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

/// A task's record as the state holds it, with every stamp, and its live dots (nil when deleted).
typealias NamedRecord = (record: TaskRecord, live: LiveDots?)

/// Reading only the tasks a command names (Spec/log-format.md, "Task index"): a command that
/// writes a few tasks reads them, with their stamps and dots, through the snapshot's task
/// index and the log after it, and runs the same code it runs on the loaded state on a state
/// that holds only those tasks. It reads the state instead when the state is loaded already
/// or the snapshot cannot answer.
extension TaskStore {
    /// Whether this store object holds the whole state (it loaded it), rather than reading
    /// the tasks it needs from the snapshot.
    package var holdsState: Bool { inner.withLock { $0.state != nil } }

    /// The records of `ids` (live, deleted, or never added but written) as the whole state
    /// holds them, read through the snapshot's task index merged with the log after it. An id
    /// neither lists is one the state does not hold. Nil when the state is loaded, the
    /// snapshot has no usable index, or one of `required` is in neither (the state then
    /// answers, and gives the exact error).
    func namedRecords(_ ids: Set<TaskID>, requiring required: Set<TaskID> = []) throws(StoreError) -> [TaskID: NamedRecord]? {
        try readingSaved { (saved) throws(DecodeError) -> [TaskID: NamedRecord]? in
            let wanted = ids.union(required)
            guard let read = try Self.savedRecords(wanted, saved),
                required.allSatisfy({ read[$0] != nil || saved.after.records.position(of: $0) != nil })
            else { return nil }
            return saved.after.records(wanted, saved: read, savedTombstones: try Self.savedTombstones(for: wanted, saved))
        }
    }

    /// A state holding only `records` (and `tombstones` as its membership tombstones): what
    /// the whole state says of these tasks, it says too.
    static func partialState(_ records: [TaskID: NamedRecord], tombstones: Set<OperationID> = []) -> TaskState {
        var table = TaskTable()
        for (id, named) in records.sorted(by: { $0.key < $1.key }) {
            _ = table.add(id, live: named.live) { $0 = named.record }
        }
        return ._assemble(records: table, membershipTombstones: tombstones, version: VersionVector(), latestTime: .zero)
    }

    /// Runs `body` on a state that holds the tasks `ids` and `probing`, read through the
    /// snapshot's task index (``namedRecords(_:requiring:)``), or else on the whole state.
    /// `body` must look at no other task. Each of `ids` must be known to the snapshot or the
    /// log after it for the index to answer; one of `probing` may be unknown (it is then absent).
    func withNamedState<R>(
        _ ids: Set<TaskID>, probing: Set<TaskID> = [], _ body: (borrowing TaskState) throws(StoreError) -> R
    ) throws(StoreError) -> R {
        if let found = try namedRecords(ids.union(probing), requiring: ids) {
            return try body(Self.partialState(found))
        }
        return try withState(body)
    }

    /// Runs `body` on a state that holds `ids`, `roots` and every task reachable from `roots`
    /// through `links`, read through the index a step at a time; on the whole state when the
    /// index cannot answer or more than ``deepestAncestry`` tasks are reachable.
    func withLinkedState<R>(
        _ ids: Set<TaskID>, from roots: Set<TaskID>, following links: (TaskItem) -> [TaskID],
        _ body: (borrowing TaskState) throws(StoreError) -> R
    ) throws(StoreError) -> R {
        if let found = try linkedRecords(ids, from: roots, following: links) {
            return try body(Self.partialState(found))
        }
        return try withState(body)
    }

    /// The records ``withLinkedState(_:from:following:_:)`` reads; nil when it reads the state.
    private func linkedRecords(
        _ ids: Set<TaskID>, from roots: Set<TaskID>, following links: (TaskItem) -> [TaskID]
    ) throws(StoreError) -> [TaskID: NamedRecord]? {
        guard var found = try namedRecords(roots, requiring: ids.union(roots)) else { return nil }
        var asked = ids.union(roots)
        var step = roots
        while true {
            let read = Self.partialState(found.filter { step.contains($0.key) })
            let next = Set(step.compactMap { read.task($0) }.flatMap(links)).subtracting(asked)
            if next.isEmpty { return found }
            asked.formUnion(next)
            guard asked.count <= Self.deepestAncestry, let more = try namedRecords(next) else { return nil }
            found.merge(more) { a, _ in a }
            step = next
        }
    }
}
