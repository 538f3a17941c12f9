@_spi(Engine) import TaskModel

extension TaskStore {
    /// The longest chain of parents ``tree(around:)`` follows before reading the whole tree.
    package static let deepestAncestry = 64

    /// The part of ``tree()`` that touches `ids`: each task, its parents up to the top, its
    /// subtasks and its dependencies, with the cycle rule applied. What the tree says of
    /// `ids` (parent, subtasks, blocked) equals what the whole tree says. When the snapshot
    /// allows, only those tasks are read, and saved tasks are tested for a parent in place.
    public func tree(around ids: [TaskID]) throws(StoreError) -> TaskTree {
        var found = try liveTasks(Set(ids))
        guard let ancestors = try ancestry(of: Array(found.values)) else { return try tree() }
        found.merge(ancestors) { a, _ in a }
        for child in try subtasks(of: Set(ids)) { found[child.id] = child }
        let dependencies = Set(found.values.flatMap(\.dependencies)).subtracting(found.keys)
        found.merge(try liveTasks(dependencies)) { a, _ in a }
        return try tree(of: found.values.sorted { ($0.createdAt, $0.id.rawValue) < ($1.createdAt, $1.id.rawValue) })
    }

    /// The live tasks above `tasks`, parent after parent; nil when a chain is longer than
    /// ``deepestAncestry``.
    private func ancestry(of tasks: [TaskItem]) throws(StoreError) -> [TaskID: TaskItem]? {
        var found: [TaskID: TaskItem] = [:]
        for task in tasks {
            var next = task.parent
            var steps = 0
            while let id = next, found[id] == nil, id != task.id {
                steps += 1
                guard steps <= Self.deepestAncestry else { return nil }
                guard let parent = try liveTasks([id])[id] else { break }
                found[id] = parent
                next = parent.parent
            }
        }
        return found
    }

    /// The live tasks whose parent register names one of `parents`, in creation order.
    private func subtasks(of parents: Set<TaskID>) throws(StoreError) -> [TaskItem] {
        if let candidates = try childCandidates(of: parents) {
            return try liveTasks(candidates).values.filter { $0.parent.map(parents.contains) ?? false }
        }
        var sink = ChildSink(parents: parents)
        try scanTasks(TaskQuery(status: .all), into: &sink)
        return sink.children
    }
}

/// Keeps the tasks whose parent is among `parents`; a saved task is tested on its bytes and
/// made an item only when it is kept.
private struct ChildSink: TaskSink {
    let parents: Set<TaskID>
    let parentBytes: Set<[UInt8]>
    var children: [TaskItem] = []

    init(parents: Set<TaskID>) {
        self.parents = parents
        parentBytes = Set(parents.map { Array($0.rawValue.utf8) })
    }

    mutating func take(_ task: TaskItem) {
        if let p = task.parent, parents.contains(p) { children.append(task) }
    }

    mutating func take(_ task: borrowing SavedTask) {
        guard let named = task.metaValue(PlanningKey.parent), parentBytes.contains(Array(named)) else { return }
        children.append(task.item)
    }
}
