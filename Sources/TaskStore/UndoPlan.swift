@_spi(Engine) import TaskModel

/// What undoing one task's part of a change writes (Spec/cli.md, "Undo"), from the task as the
/// logs show it before and after the change and as it is now. A field that no longer holds
/// what the change wrote was changed since by another write: it is left, and named.
struct UndoPlan {
    var patch: TaskPatch
    var left: [String] = []
    var writes: Bool

    init(before: TaskItem?, after: TaskItem, current: TaskItem) {
        var patch = TaskPatch(id: current.id)
        guard let before else {
            // The change made the task: undoing it removes the task.
            patch.deleted = !current.isDeleted
            (self.patch, writes) = (patch, patch.deleted)
            return
        }
        if after.isDeleted != before.isDeleted {
            patch.deleted = before.isDeleted
            (self.patch, writes) = (patch, current.isDeleted != before.isDeleted)
            return
        }
        let (b, a, now) = (TaskPatch(before), TaskPatch(after), TaskPatch(current))
        var left: [String] = []
        func revert<V: Equatable>(_ name: String, _ field: WritableKeyPath<TaskPatch, V>) {
            guard b[keyPath: field] != a[keyPath: field] else { return }
            if now[keyPath: field] == a[keyPath: field] { patch[keyPath: field] = b[keyPath: field] } else { left.append(name) }
        }
        revert("title", \.title)
        revert("notes", \.notes)
        revert("done", \.done)
        revert("priority", \.priority)
        revert("due", \.due)
        revert("list", \.list)
        // Tags the change added come off, tags it removed go back; others' changes stay.
        let (tb, ta, tc) = (Set(before.tags), Set(after.tags), Set(current.tags))
        if tb != ta { patch.tags = Array(tc.subtracting(ta.subtracting(tb)).union(tb.subtracting(ta))).sorted() }
        let (db, da, dc) = (Set(before.dependencies), Set(after.dependencies), Set(current.dependencies))
        if db != da { patch.dependencies = Array(dc.subtracting(da.subtracting(db)).union(db.subtracting(da))).sorted() }
        if before.userMeta != after.userMeta {
            var meta = current.userMeta
            for key in Set(before.userMeta.keys).union(after.userMeta.keys) where before.meta[key] != after.meta[key] {
                if meta[key] == after.meta[key] { meta[key] = before.meta[key] } else { left.append("meta." + key) }
            }
            patch.meta = meta
        }
        for key in PlanningKey.all.sorted() where before.meta[key] != after.meta[key] {
            if current.meta[key] == after.meta[key] { patch.planning[key] = .some(before.meta[key]) } else { left.append(key) }
        }
        (self.patch, self.left, writes) = (patch, left, true)
    }
}
