import CRDTCore
import TaskModel

/// The fields of a new task.
public struct NewTask: Sendable, Equatable {
    public var title: String
    public var notes: String?
    public var priority: UInt8?
    public var due: Due?
    public var list: String?
    public var tags: [String]
    public var meta: [String: String]

    public init(
        title: String, notes: String? = nil, priority: UInt8? = nil, due: Due? = nil, list: String? = nil,
        tags: [String] = [], meta: [String: String] = [:]
    ) {
        self.title = title
        self.notes = notes
        self.priority = priority
        self.due = due
        self.list = list
        self.tags = tags
        self.meta = meta
    }

    /// The operations that create this task under `id`.
    public func operations(id: TaskID) -> [TaskOperation] {
        var ops: [TaskOperation] = [.add(id), .set(id, .title(title))]
        if let notes { ops.append(.set(id, .notes(notes))) }
        if let priority { ops.append(.set(id, .priority(priority))) }
        if let due { ops.append(.set(id, .due(due))) }
        if let list { ops.append(.set(id, .list(list))) }
        for key in meta.keys.sorted() { ops.append(.set(id, .meta(key: key, value: meta[key]))) }
        for tag in Set(tags).sorted() { ops.append(.addTag(id, tag)) }
        return ops
    }
}

extension TaskStore {
    /// Adds a task under a new random id. Does not read the store: O(1) in its size.
    /// - Returns: the task as created.
    @discardableResult
    public func add(_ task: NewTask, id: TaskID = .random()) throws(StoreError) -> TaskItem {
        try validate(task.priority)
        let commit = try commit(task.operations(id: id))
        var state = TaskState()
        state.apply(commit, from: replica)
        return state.task(id)!
    }

    /// Adds a task under a new random id.
    @discardableResult
    public func add(
        title: String, notes: String? = nil, priority: UInt8? = nil, due: Due? = nil, list: String? = nil,
        tags: [String] = []
    ) throws(StoreError) -> TaskItem {
        try add(NewTask(title: title, notes: notes, priority: priority, due: due, list: list, tags: tags))
    }

    /// Writes fields of an existing task; each write is its own last-writer-wins register,
    /// so fields not written are never touched.
    public func edit(_ id: TaskID, _ writes: [FieldWrite]) throws(StoreError) {
        for w in writes { if case .priority(let p) = w { try validate(p) } }
        guard !writes.isEmpty else { return }
        try requireTask(id)
        try commit(writes.map { .set(id, $0) })
    }

    /// Adds and removes tags. A removal deletes only the tag additions this replica has seen,
    /// so a concurrent addition of the same tag elsewhere wins.
    public func tag(_ id: TaskID, add: [String] = [], remove: [String] = []) throws(StoreError) {
        try requireTask(id)
        let ops = try withState { (state) -> [TaskOperation] in
            let tags = state.records[id]?.tags ?? ORSet()
            return add.map { .addTag(id, $0) }
                + remove.compactMap { tag in
                    let seen = tags.observedTags(of: tag)
                    return seen.isEmpty ? nil : .removeTag(id, tag, observed: seen.sorted())
                }
        }
        if !ops.isEmpty { try commit(ops) }
    }

    /// Marks tasks done (one commit). Tasks already done are left as they are.
    public func complete(_ ids: [TaskID]) throws(StoreError) { try setDone(ids, true) }

    /// Marks tasks open again (one commit). Open tasks are left as they are.
    public func reopen(_ ids: [TaskID]) throws(StoreError) { try setDone(ids, false) }

    private func setDone(_ ids: [TaskID], _ done: Bool) throws(StoreError) {
        for id in ids { try requireTask(id) }
        let ops = try withState { state in
            ids.filter { state.task($0)?.isDone != done }.map { TaskOperation.set($0, .done(done)) }
        }
        if !ops.isEmpty { try commit(ops) }
    }

    /// Deletes tasks (one commit): removes the membership tags this replica has observed, so a
    /// concurrent edit elsewhere does not bring a task back (``restore(_:)`` does).
    public func remove(_ ids: [TaskID]) throws(StoreError) {
        let ops = try withState { (state) throws(StoreError) -> [TaskOperation] in
            var ops: [TaskOperation] = []
            for id in ids {
                guard state.task(id) != nil else { throw .taskNotFound(id.rawValue) }
                let seen = state.membership.observedTags(of: id)
                if !seen.isEmpty { ops.append(.remove(id, observed: seen.sorted())) }
            }
            return ops
        }
        if !ops.isEmpty { try commit(ops) }
    }

    /// Brings a deleted task back with its latest field values (including edits made while it
    /// was deleted). Restoring a live task does nothing.
    public func restore(_ id: TaskID) throws(StoreError) {
        let live = try withState { (state) throws(StoreError) -> Bool in
            guard state.task(id) != nil else { throw .taskNotFound(id.rawValue) }
            return state.isLive(id)
        }
        if !live { try commit([.add(id)]) }
    }

    /// Creates or updates tasks in one commit: a task whose id is new is added; for an existing
    /// task only the fields that differ are written.
    /// - Returns: (created, updated) counts.
    @discardableResult
    public func importTasks(_ tasks: [(id: TaskID, task: NewTask, done: Bool)]) throws(StoreError) -> (created: Int, updated: Int) {
        for t in tasks { try validate(t.task.priority) }
        let (ops, created, updated) = try withState { state in
            var ops: [TaskOperation] = []
            var created = 0
            var updated = 0
            for (id, t, done) in tasks {
                guard let existing = state.task(id) else {
                    ops += t.operations(id: id)
                    if done { ops.append(.set(id, .done(true))) }
                    created += 1
                    continue
                }
                var mine: [TaskOperation] = []
                if existing.isDeleted { mine.append(.add(id)) }
                if existing.title != t.title { mine.append(.set(id, .title(t.title))) }
                if existing.notes != t.notes { mine.append(.set(id, .notes(t.notes))) }
                if existing.priority != t.priority { mine.append(.set(id, .priority(t.priority))) }
                if existing.due != t.due { mine.append(.set(id, .due(t.due))) }
                if existing.list != t.list { mine.append(.set(id, .list(t.list))) }
                if existing.isDone != done { mine.append(.set(id, .done(done))) }
                for (k, v) in t.meta.sorted(by: { $0.key < $1.key }) where existing.meta[k] != v {
                    mine.append(.set(id, .meta(key: k, value: v)))
                }
                for k in existing.meta.keys.sorted() where t.meta[k] == nil {
                    mine.append(.set(id, .meta(key: k, value: nil)))
                }
                for tag in Set(t.tags).subtracting(existing.tags).sorted() { mine.append(.addTag(id, tag)) }
                for tag in Set(existing.tags).subtracting(t.tags).sorted() {
                    let seen = state.records[id]?.tags.observedTags(of: tag) ?? []
                    mine.append(.removeTag(id, tag, observed: seen.sorted()))
                }
                if !mine.isEmpty { updated += 1 }
                ops += mine
            }
            return (ops, created, updated)
        }
        if !ops.isEmpty { try commit(ops) }
        return (created, updated)
    }

    private func requireTask(_ id: TaskID) throws(StoreError) {
        guard try task(id) != nil else { throw .taskNotFound(id.rawValue) }
    }

    private func validate(_ priority: UInt8?) throws(StoreError) {
        if let p = priority, p > 3 { throw .invalidArgument("priority must be 0 to 3 (3 most urgent), got \(p)") }
    }
}
