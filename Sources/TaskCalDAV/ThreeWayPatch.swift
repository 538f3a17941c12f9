@_spi(Engine) import TaskModel

/// What another replica changed, as a patch: the fields where its copy differs from the
/// copy both sides last agreed on. Applied over the store, it keeps every local change to
/// the other fields.
enum ThreeWayPatch {
    /// The changes from `base` to `theirs` (both whole, as a VTODO states a task), over
    /// `current`: tags and meta entries merge one by one.
    static func changes(from base: TaskPatch, to theirs: TaskPatch, over current: TaskItem?) -> TaskPatch {
        var p = TaskPatch(id: theirs.id)
        if theirs.title != base.title { p.title = theirs.title }
        if theirs.notes != base.notes { p.notes = theirs.notes }
        if theirs.done != base.done { p.done = theirs.done }
        if theirs.priority != base.priority { p.priority = theirs.priority }
        if theirs.due != base.due { p.due = theirs.due }
        if theirs.list != base.list { p.list = theirs.list }
        let baseTags = Set(base.tags ?? [])
        let theirTags = Set(theirs.tags ?? [])
        if baseTags != theirTags {
            p.tags = Set(current?.tags ?? []).union(theirTags.subtracting(baseTags)).subtracting(baseTags.subtracting(theirTags)).sorted()
        }
        let (baseDependencies, theirDependencies) = (Set(base.dependencies ?? []), Set(theirs.dependencies ?? []))
        if baseDependencies != theirDependencies {
            let held = Set(current?.dependencies ?? [])
            p.dependencies = held.union(theirDependencies.subtracting(baseDependencies)).subtracting(baseDependencies.subtracting(theirDependencies))
                .sorted { $0.rawValue < $1.rawValue }
        }
        let baseMeta = base.meta ?? [:]
        let theirMeta = theirs.meta ?? [:]
        if baseMeta != theirMeta {
            var meta = current?.meta ?? [:]
            for key in Set(baseMeta.keys).union(theirMeta.keys) where baseMeta[key] != theirMeta[key] { meta[key] = theirMeta[key] }
            p.state(wholeMeta: meta, over: current)
        }
        return p
    }

    /// Whether two whole patches state the same task.
    static func same(_ a: TaskPatch, _ b: TaskPatch) -> Bool {
        a.title == b.title && a.notes == b.notes && a.done == b.done && a.priority == b.priority && a.due == b.due
            && a.list == b.list && Set(a.tags ?? []) == Set(b.tags ?? []) && (a.meta ?? [:]) == (b.meta ?? [:])
            && Set(a.dependencies ?? []) == Set(b.dependencies ?? [])
    }
}
