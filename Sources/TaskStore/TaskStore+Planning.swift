@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

/// Subtasks, dependencies and the start register (Spec/crdt.md, "Subtasks, dependencies and
/// dates"). Wait and scheduled dates are plain writes: ``FieldWrite/wait(_:)``, ``FieldWrite/scheduled(_:)``.
extension TaskStore {
    /// Puts `id` under `parent`, or at top level when `parent` is nil.
    /// - Throws: ``StoreError/taskNotFound(_:)`` when either task is not on the list;
    ///   ``StoreError/circularLink(task:other:dependency:)`` when `parent` is `id` or one of its subtasks.
    public func setParent(_ id: TaskID, _ parent: TaskID?) throws(StoreError) {
        try edit(id, [.parent(parent)])
    }

    /// Adds and removes dependencies of `id`. A removal deletes only the additions this replica
    /// has seen, so a concurrent addition elsewhere wins; removing one that is absent does nothing.
    /// When the snapshot allows, only `id` and the tasks the added ones depend on are read.
    /// - Throws: ``StoreError/taskNotFound(_:)`` when `id` or an added dependency is not on the
    ///   list; ``StoreError/circularLink(task:other:dependency:)`` when an added one is `id`
    ///   or depends on it, directly or through others.
    public func depend(_ id: TaskID, on add: [TaskID] = [], removing remove: [TaskID] = []) throws(StoreError) {
        try checkDependencies(of: id, add)
        let ops = try withLinkedState([id], from: Set(add), following: \.dependencies) { (state) throws(StoreError) -> [TaskOperation] in
            guard state.isLive(id) else { throw .taskNotFound(id.rawValue) }
            try Self.refuseDependencyCycles(id, add, in: state)
            let tags = state.records[id]?.tags ?? ORSet()
            return add.map { .addTag(id, PlanningKey.dependencyElement($0)) }
                + remove.compactMap { dependency in
                    let element = PlanningKey.dependencyElement(dependency)
                    let seen = tags.observedTags(of: element)
                    return seen.isEmpty ? nil : .removeTag(id, element, observed: seen.sorted())
                }
        }
        if !ops.isEmpty { try commit(ops) }
    }

    /// Marks the tasks in progress as of `now` (milliseconds; the wall clock by default), in
    /// one commit. Tasks in progress already keep their start.
    public func start(_ ids: [TaskID], now: Int64? = nil) throws(StoreError) {
        let instant = Due.instant(milliseconds: now ?? Int64(Posix.wallClockMilliseconds()))
        try setStart(ids, to: instant)
    }

    /// Marks the tasks no longer in progress (one commit); tasks not started are left alone.
    public func stop(_ ids: [TaskID]) throws(StoreError) { try setStart(ids, to: nil) }

    private func setStart(_ ids: [TaskID], to instant: Due?) throws(StoreError) {
        let live = try liveTasks(Set(ids))
        for id in ids where live[id] == nil { throw .taskNotFound(id.rawValue) }
        let changing = ids.filter { (live[$0]!.startedAt == nil) == (instant != nil) }
        if !changing.isEmpty { try commit(changing.map { .set($0, .start(instant)) }) }
    }

    /// The live tasks as a forest of subtasks, with the cycle rule applied.
    public func tree() throws(StoreError) -> TaskTree { try tree(of: tasks(TaskQuery(status: .all))) }

    /// The tree of `all`, every live task of this store (read just before).
    package func tree(of all: [TaskItem]) throws(StoreError) -> TaskTree {
        try TaskTree(all) { (ids) throws(StoreError) in
            try withNamedState(ids) { state in
                var stamps: [TaskID: Stamp] = [:]
                for id in ids { stamps[id] = state.records[id]?.meta[PlanningKey.parent]?.stamp }
                return stamps
            }
        }
    }

    // MARK: Checks

    /// Refuses a parent write among `writes` that names `id` itself, a task not on the list,
    /// or (unless `id` is new) one of `id`'s subtasks, through any number of levels. When the
    /// snapshot allows, only the tasks above `parent` are read, parent after parent.
    func checkParent(of id: TaskID, in writes: [FieldWrite], isNew: Bool = false) throws(StoreError) {
        guard let written = writes.lazy.compactMap(\.parentWritten).last, let parent = written else { return }
        if parent == id { throw .circularLink(task: id.rawValue, other: id.rawValue, dependency: false) }
        guard try liveTasks([parent])[parent] != nil else { throw .taskNotFound(parent.rawValue) }
        guard !isNew else { return }
        try withLinkedState([], from: [parent], following: { $0.isDeleted ? [] : $0.parent.map { [$0] } ?? [] }) { (state) throws(StoreError) in
            var seen: Set<TaskID> = [parent]
            var next = state.task(parent)?.parent
            while let above = next, seen.insert(above).inserted, state.isLive(above) {
                if above == id { throw .circularLink(task: id.rawValue, other: parent.rawValue, dependency: false) }
                next = state.task(above)?.parent
            }
        }
    }

    /// Refuses dependencies on `id` itself or on tasks not on the list.
    func checkDependencies(of id: TaskID, _ dependencies: [TaskID]) throws(StoreError) {
        guard !dependencies.isEmpty else { return }
        if dependencies.contains(id) { throw .circularLink(task: id.rawValue, other: id.rawValue, dependency: true) }
        let live = try liveTasks(Set(dependencies))
        for d in dependencies where live[d] == nil { throw .taskNotFound(d.rawValue) }
    }

    /// Refuses a dependency of `id` on a task that depends on `id`, through any number of tasks.
    static func refuseDependencyCycles(_ id: TaskID, _ added: [TaskID], in state: borrowing TaskState) throws(StoreError) {
        for start in added {
            var seen: Set<TaskID> = [start]
            var queue = [start]
            while let next = queue.popLast() {
                for d in state.task(next)?.dependencies ?? [] where seen.insert(d).inserted {
                    if d == id { throw .circularLink(task: id.rawValue, other: start.rawValue, dependency: true) }
                    queue.append(d)
                }
            }
        }
    }

    // MARK: Patches

    /// The planning registers a patch writes, sorted by key: those it names, and those its
    /// `meta` holds that it does not name (as older versions wrote them).
    static func planningWrites(of p: TaskPatch) -> [(key: String, value: String?)] {
        var writes = p.planning
        for (key, value) in p.meta ?? [:] where PlanningKey.all.contains(key) && writes[key] == nil { writes[key] = .some(value) }
        // A parent is written as its id's canonical text, which is all that names it.
        if let text = writes[PlanningKey.parent] ?? nil, let id = TaskID(text) { writes[PlanningKey.parent] = .some(id.rawValue) }
        return writes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The dependency elements to add and remove to reach the set a patch wants.
    static func dependencyOperations(_ p: TaskPatch, _ existing: TaskItem, in state: borrowing TaskState) -> [TaskOperation] {
        guard let wanted = p.dependencies.map(Set.init) else { return [] }
        let id = existing.id
        let have = Set(existing.dependencies)
        let tags = state.records[id]?.tags ?? ORSet()
        let removals = have.subtracting(wanted).map(PlanningKey.dependencyElement).sorted().map { element in
            TaskOperation.removeTag(id, element, observed: tags.observedTags(of: element).sorted())
        }
        return wanted.subtracting(have).map(PlanningKey.dependencyElement).sorted().map { .addTag(id, $0) } + removals
    }

    /// Refuses a patch whose parent or a dependency is the task itself. A link to a task the
    /// store lacks is kept: another device may hold it, and until it arrives it counts as none.
    func checkLinks(of p: TaskPatch, id: TaskID, entry: Int) throws(StoreError) {
        var named = p.dependencies ?? []
        if let text = Self.planningWrites(of: p).first(where: { $0.key == PlanningKey.parent })?.value {
            guard let parent = TaskID(text) else { throw .invalidArgument("entry \(entry): parent '\(text)' is not a valid task id") }
            if parent == id { throw .circularLink(task: id.rawValue, other: id.rawValue, dependency: false) }
            named.append(parent)
        }
        if named.contains(id) { throw .circularLink(task: id.rawValue, other: id.rawValue, dependency: true) }
    }
}
