/// Writes of the planning registers (``PlanningKey``), for ``TaskStore/edit(_:_:)``.
extension FieldWrite {
    /// Puts the task under `parent`, or at top level when nil.
    public static func parent(_ parent: TaskID?) -> FieldWrite { .meta(key: PlanningKey.parent, value: parent?.rawValue) }
    /// Hides the task from `list` and `top` until `date`; nil shows it again.
    public static func wait(_ date: Due?) -> FieldWrite { .meta(key: PlanningKey.wait, value: date?.description) }
    /// Plans the task for `date`; nil removes the plan.
    public static func scheduled(_ date: Due?) -> FieldWrite { .meta(key: PlanningKey.scheduled, value: date?.description) }
    /// Marks the task in progress since `instant`; nil marks it stopped.
    public static func start(_ instant: Due?) -> FieldWrite { .meta(key: PlanningKey.start, value: instant?.description) }

    /// The parent this write sets: `.some(nil)` when it clears it, nil when it is not a parent write.
    package var parentWritten: TaskID?? {
        guard case .meta(PlanningKey.parent, let value) = self else { return nil }
        return .some(value.flatMap(TaskID.init))
    }
}

extension Due {
    /// Whether it is still ahead: a date while `today` (the local date, in days) is earlier,
    /// an instant while `now` (milliseconds) is earlier.
    public func isAhead(now: Int64, today: Int64) -> Bool {
        switch self {
        case .date(let d): d > today
        case .instant(let ms): ms > now
        }
    }
}

extension TaskItem {
    /// Whether the task is hidden from `list` and `top` because its wait date is still ahead.
    public func isWaiting(now: Int64, today: Int64) -> Bool { waitUntil?.isAhead(now: now, today: today) ?? false }
}

extension PlanningKey {
    /// Whether `key`, as UTF-8 bytes, is one of ``all``.
    static func isKey(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard (4...9).contains(key.count) else { return false }
        return all.contains { $0.utf8.elementsEqual(key) }
    }
}

extension SavedTask {
    /// The wait date, as ``TaskItem/waitUntil`` reads it.
    package var waitUntil: Due? { savedDue(meta: PlanningKey.wait) }
}

extension TaskPatch {
    /// Sets the patch from a whole meta map, as a file states a task: the planning registers
    /// go to ``planning``, each one the map lacks cleared, and the rest to ``meta`` when it
    /// differs from `task`'s (``TaskItem/userMeta``).
    package mutating func state(wholeMeta whole: [String: String], over task: TaskItem?) {
        for key in PlanningKey.all.sorted() where whole[key] != task?.meta[key] { planning[key] = .some(whole[key]) }
        let user = whole.filter { !PlanningKey.all.contains($0.key) }
        meta = user == task?.userMeta ?? [:] ? nil : user
    }
}
