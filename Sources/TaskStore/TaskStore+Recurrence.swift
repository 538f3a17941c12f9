@_spi(Engine) import TaskModel

extension TaskStore {
    /// The next occurrence of `task` (Spec/crdt.md, "Recurring tasks"): due one interval after
    /// its due date, or after `today` (local days) if it had none; nil if it does not recur.
    /// Its id is fixed by the series and the due date, so it is made once on every replica.
    package static func nextOccurrence(of task: TaskItem, today: Int64) -> (TaskID, NewTask)? {
        guard let rule = task.recurrence else { return nil }
        let due = rule.next(after: task.due ?? .date(days: today))
        let series = task.meta[PlanningKey.series] ?? task.id.rawValue
        var meta = task.meta
        meta[PlanningKey.series] = series
        meta[PlanningKey.start] = nil
        let next = NewTask(
            title: task.title, notes: task.notes, priority: task.priority, due: due, list: task.list,
            tags: task.tags, meta: meta)
        return (RecurrenceRule.occurrenceID(series: series, due: due), next)
    }

    /// Today's date in the local time zone (`TZ` respected), as days since 1970-01-01.
    package static func localToday() -> Int64 {
        LocalZone().civil(milliseconds: Int64(Posix.wallClockMilliseconds())).days
    }

    /// Marks tasks done and makes the next occurrence of each open recurring one, in one
    /// commit: the step every completion shares (`done`, imports, CalDAV, the REST API). An
    /// occurrence the store holds already, deleted or not, is not made again, so a completion
    /// that arrives twice, or on two replicas, leaves one next occurrence. Tasks already done
    /// are left as they are; a deleted task is marked done but not restored.
    /// - Parameter today: local days since 1970-01-01 (default: now), for a task without a due date.
    /// - Returns: the ids of the next occurrences made.
    @discardableResult
    public func completeAndRecur(_ ids: [TaskID], today: Int64? = nil) throws(StoreError) -> [TaskID] {
        let live = try liveTasks(Set(ids))
        if ids.allSatisfy({ live[$0] != nil }) && !live.values.contains(where: { !$0.isDone && $0.recurrence != nil }) {
            try complete(ids)
            return []
        }
        let today = today ?? Self.localToday()
        let completions = ids.map { id in
            var done = TaskPatch(id: id)
            done.done = true
            return done
        }
        let (ops, next) = try withPatchedState(completions, requiring: Set(ids), today: today) { (state) throws(StoreError) -> ([TaskOperation], [TaskID]) in
            var ops: [TaskOperation] = []
            var next: [TaskID] = []
            var claimed = Set(ids)
            for (id, done) in zip(ids, completions) {
                guard let task = state.task(id) else { throw .taskNotFound(id.rawValue) }
                guard !task.isDone else { continue }
                ops.append(.set(id, .done(true)))
                if let (made, its) = nextOccurrenceOperations(for: done, in: state, claimed: &claimed, today: today) {
                    next.append(made)
                    ops += its
                }
            }
            return (ops, next)
        }
        if !ops.isEmpty { try commit(ops) }
        return next
    }

    /// The operations that make the next occurrence of the task `patch` completes, if it was
    /// open and recurs once the patch's fields are applied; none if that occurrence exists or
    /// is among `claimed` (ids the same change writes already), which it joins.
    func nextOccurrenceOperations(
        for patch: TaskPatch, in state: borrowing TaskState, claimed: inout Set<TaskID>, today: Int64
    ) -> (TaskID, [TaskOperation])? {
        guard let (next, fields) = Self.patchedOccurrence(of: patch, in: state, today: today), state.task(next) == nil,
            claimed.insert(next).inserted, !Self.holdsOccurrence(series: fields.meta[PlanningKey.series], due: fields.due, in: state)
        else { return nil }
        return (next, fields.operations(id: next))
    }

    /// The next occurrence of the task `patch` completes, with the patch's fields applied:
    /// nil unless the task is open and recurs.
    static func patchedOccurrence(of patch: TaskPatch, in state: borrowing TaskState, today: Int64) -> (TaskID, NewTask)? {
        guard patch.done == true, !patch.deleted, let id = patch.id, var task = state.task(id), !task.isDone, !task.isDeleted
        else { return nil }
        if let v = patch.title { task.title = v }
        if let v = patch.notes { task.notes = v }
        if let v = patch.priority { task.priority = v }
        if let v = patch.due { task.due = v }
        if let v = patch.list { task.list = v }
        if let v = patch.tags { task.tags = v }
        if let v = patch.meta { task.meta = v.merging(task.meta.filter { PlanningKey.all.contains($0.key) }) { mine, _ in mine } }
        for (key, value) in Self.planningWrites(of: patch) { task.meta[key] = value }
        if let v = patch.dependencies { task.dependencies = v }
        return nextOccurrence(of: task, today: today)
    }

    /// The occurrence id a patch claims by stating a task of a series with a due date, so
    /// that completing the task before it in the same change makes none beside it (another
    /// app's occurrence, such as a Taskwarrior child, has an id of its own).
    static func statedOccurrence(_ patch: TaskPatch) -> TaskID? {
        let series = planningWrites(of: patch).first { $0.key == PlanningKey.series }?.value ?? nil
        guard let series, let due = patch.due ?? nil else { return nil }
        return RecurrenceRule.occurrenceID(series: series, due: due)
    }

    /// Whether a live task of `series` is due `due` already, under any id.
    static func holdsOccurrence(series: String?, due: Due?, in state: borrowing TaskState) -> Bool {
        guard let series, let due else { return false }
        return state.liveTasks.contains { $0.due == due && $0.meta[PlanningKey.series] == series }
    }
}
