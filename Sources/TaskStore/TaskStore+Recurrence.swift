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
}
