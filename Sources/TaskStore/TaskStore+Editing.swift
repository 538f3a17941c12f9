@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

/// The fields of a new task.
public struct NewTask: Sendable, Equatable {
    public var title: String
    public var notes: String?
    public var priority: UInt8?
    public var due: Due?
    public var list: String?
    public var tags: [String]
    /// Entries under ``PlanningKey`` keys are written as given; the fields below replace them.
    public var meta: [String: String]
    /// The task it is a subtask of.
    public var parent: TaskID?
    /// The tasks it waits for.
    public var dependencies: [TaskID]
    /// Hidden from `list` and `top` until then.
    public var wait: Due?
    /// When it is planned for.
    public var scheduled: Due?

    public init(
        title: String, notes: String? = nil, priority: UInt8? = nil, due: Due? = nil, list: String? = nil,
        tags: [String] = [], meta: [String: String] = [:], parent: TaskID? = nil, dependencies: [TaskID] = [],
        wait: Due? = nil, scheduled: Due? = nil
    ) {
        self.title = title
        self.notes = notes
        self.priority = priority
        self.due = due
        self.list = list
        self.tags = tags
        self.meta = meta
        self.parent = parent
        self.dependencies = dependencies
        self.wait = wait
        self.scheduled = scheduled
    }

    /// The operations that create this task under `id`.
    @_spi(Engine) public func operations(id: TaskID) -> [TaskOperation] {
        var ops: [TaskOperation] = [.add(id), .set(id, .title(title))]
        if let notes { ops.append(.set(id, .notes(notes))) }
        if let priority { ops.append(.set(id, .priority(priority))) }
        if let due { ops.append(.set(id, .due(due))) }
        if let list { ops.append(.set(id, .list(list))) }
        var meta = meta
        if let parent { meta[PlanningKey.parent] = parent.rawValue }
        if let wait { meta[PlanningKey.wait] = wait.description }
        if let scheduled { meta[PlanningKey.scheduled] = scheduled.description }
        for key in meta.keys.sorted() { ops.append(.set(id, .meta(key: key, value: meta[key]))) }
        let elements = tags + dependencies.map(PlanningKey.dependencyElement)
        for tag in Set(elements).sorted() { ops.append(.addTag(id, tag)) }
        return ops
    }
}

extension TaskStore {
    /// Adds a task under a new random id. Does not read the store: O(1) in its size.
    /// - Returns: the task as created.
    @discardableResult
    public func add(_ task: NewTask, id: TaskID = .random()) throws(StoreError) -> TaskItem {
        try validate(task.priority)
        try validate(tags: task.tags)
        if let parent = task.parent { try checkParent(of: id, in: [.parent(parent)], isNew: true) }
        try checkDependencies(of: id, task.dependencies)
        let commit = try commit(task.operations(id: id))
        return TaskState.holding(commit, from: replica).task(id)!
    }

    /// Adds a task under a new random id (a shorthand for the tests and the command line).
    @discardableResult
    package func add(
        title: String, notes: String? = nil, priority: UInt8? = nil, due: Due? = nil, list: String? = nil,
        tags: [String] = []
    ) throws(StoreError) -> TaskItem {
        try add(NewTask(title: title, notes: notes, priority: priority, due: due, list: list, tags: tags))
    }

    /// Writes fields of an existing task; each write is its own last-writer-wins register,
    /// so fields not written are never touched. A task on the list is written without
    /// loading the state (``editIfLive(_:_:)``).
    public func edit(_ id: TaskID, _ writes: [FieldWrite]) throws(StoreError) {
        if try editIfLive(id, writes) { return }
        guard !writes.isEmpty else { return }
        try requireTask(id)
        try checkParent(of: id, in: writes)
        try commit(writes.map { .set(id, $0) })
    }

    /// Writes fields of a task on the list, as ``edit(_:_:)`` does, if it is live; returns false,
    /// writing nothing, if it is unknown or deleted. When the state is not loaded only this
    /// task is read (``liveTasks(_:)``), so a command that edits one task does not load them all.
    private func editIfLive(_ id: TaskID, _ writes: [FieldWrite]) throws(StoreError) -> Bool {
        for w in writes { if case .priority(let p) = w { try validate(p) } }
        guard try liveTasks([id])[id] != nil else { return false }
        try checkParent(of: id, in: writes)
        if !writes.isEmpty { try commit(writes.map { .set(id, $0) }) }
        return true
    }

    /// Adds and removes tags. A removal deletes only the tag additions this replica has seen,
    /// so a concurrent addition of the same tag elsewhere wins.
    /// Only this task is read when the snapshot allows (``withNamedState(_:probing:_:)``).
    public func tag(_ id: TaskID, add: [String] = [], remove: [String] = []) throws(StoreError) {
        try validate(tags: add + remove)
        let ops = try withNamedState([id]) { (state) throws(StoreError) -> [TaskOperation] in
            guard state.task(id) != nil else { throw .taskNotFound(id.rawValue) }
            let tags = state.records[id]?.tags ?? ORSet()
            return add.map { .addTag(id, $0) }
                + remove.compactMap { tag in
                    let seen = tags.observedTags(of: tag)
                    return seen.isEmpty ? nil : .removeTag(id, tag, observed: seen.sorted())
                }
        }
        if !ops.isEmpty { try commit(ops) }
    }

    /// Marks tasks done (one commit). Tasks already done are left as they are. Tasks on the
    /// list are marked without loading the state (``setDoneIfLive(_:_:)``).
    public func complete(_ ids: [TaskID]) throws(StoreError) {
        if try !setDoneIfLive(ids, true) { try setDone(ids, true) }
    }

    /// Marks tasks open again (one commit). Open tasks are left as they are.
    public func reopen(_ ids: [TaskID]) throws(StoreError) {
        if try !setDoneIfLive(ids, false) { try setDone(ids, false) }
    }

    /// Marks tasks done or open (one commit) if every one of them is on the list; returns
    /// false, writing nothing, if one is unknown or deleted. When the state is not loaded only
    /// these tasks are read (from the snapshot and the log after it), so a command that marks
    /// one task does not load them all.
    private func setDoneIfLive(_ ids: [TaskID], _ done: Bool) throws(StoreError) -> Bool {
        let live = try liveTasks(Set(ids))
        guard ids.allSatisfy({ live[$0] != nil }) else { return false }
        let ops = ids.filter { live[$0]!.isDone != done }.map { TaskOperation.set($0, .done(done)) }
        if !ops.isEmpty { try commit(ops) }
        return true
    }

    private func setDone(_ ids: [TaskID], _ done: Bool) throws(StoreError) {
        let ops = try withNamedState(Set(ids)) { (state) throws(StoreError) -> [TaskOperation] in
            for id in ids where state.task(id) == nil { throw .taskNotFound(id.rawValue) }
            return ids.filter { state.task($0)?.isDone != done }.map { TaskOperation.set($0, .done(done)) }
        }
        if !ops.isEmpty { try commit(ops) }
    }

    /// Brings a deleted task back with its latest field values (including edits made while it
    /// was deleted). Restoring a live task does nothing. Only this task is read when the
    /// snapshot allows.
    public func restore(_ id: TaskID) throws(StoreError) {
        let live = try withNamedState([id]) { (state) throws(StoreError) -> Bool in
            guard state.task(id) != nil else { throw .taskNotFound(id.rawValue) }
            return state.isLive(id)
        }
        if !live { try commit([.add(id)]) }
    }

    /// Creates or updates tasks in one commit. A patch whose id is new (or absent: a random
    /// id is chosen) creates a task and must have a title; for an existing task only the given
    /// fields that differ are written, and a deleted task is restored. A patch that marks an
    /// open recurring task done also makes its next occurrence (``completeAndRecur(_:today:)``).
    /// A few patches read only the tasks they touch when the snapshot allows (``withPatchedState(_:requiring:today:_:)``).
    /// - Parameter today: local days since 1970-01-01 (default: now), for a recurring task
    ///   without a due date.
    /// - Returns: the ids written, in order, how many were created, and the next occurrences made.
    @discardableResult
    @_spi(Engine) public func apply(
        _ patches: [TaskPatch], today: Int64? = nil
    ) throws(StoreError) -> (ids: [TaskID], created: Int, changed: Int, next: [TaskID]) {
        let today = today ?? Self.localToday()
        let (ops, ids, created, changed, next) = try withPatchedState(patches, today: today) { (state) throws(StoreError) -> ([TaskOperation], [TaskID], Int, Int, [TaskID]) in
            var ops: [TaskOperation] = []
            var ids: [TaskID] = []
            var created = 0
            var changed = 0
            var seen = Set<TaskID>()
            var claimed = Set(patches.compactMap(\.id) + patches.compactMap(Self.statedOccurrence))
            var next: [TaskID] = []
            for (index, p) in patches.enumerated() {
                let id = p.id ?? .random()
                guard seen.insert(id).inserted else {
                    throw .invalidArgument("task \(id) appears twice (entry \(index + 1))")
                }
                ids.append(id)
                let its = try operations(for: p, id: id, in: state, entry: index + 1)
                ops += its
                if state.task(id) == nil { created += its.isEmpty ? 0 : 1 } else if !its.isEmpty { changed += 1 }
                if let (made, its) = nextOccurrenceOperations(for: p, in: state, claimed: &claimed, today: today) {
                    next.append(made)
                    ops += its
                }
            }
            return (ops, ids, created, changed, next)
        }
        if !ops.isEmpty { try commitWhole(ops) }
        return (ids, created, changed, next)
    }

    /// Appends `operations` as one change that readers see whole: one commit when its payload
    /// fits ``largeChangeCommitPayload``, else several consecutive commits of about that size
    /// in one new sealed segment, which appears at once (Spec/log-format.md, "Large changes").
    /// - Throws: ``StoreError/invalidArgument(_:)``, writing nothing, when one operation alone
    ///   passes the 64 MiB a record may hold.
    /// The payload size a large change is cut at: small enough that each commit travels in
    /// one HTTP push piece of about 1 MiB.
    static let largeChangeCommitPayload = 1 << 20

    @discardableResult
    @_spi(Engine) public func commitWhole(_ operations: [TaskOperation]) throws(StoreError) -> [Commit] {
        let runs = CommitCodec.split(operations, payloadLimit: Self.largeChangeCommitPayload)
        guard runs.count > 1 else { return [try commit(operations)] }
        do {
            return try appending { (writer, floor, wall, _) throws(StoreError) in
                try writer.appendSealed(operations, runs: runs, floor: floor, wall: wall)
            }
        } catch {
            // The segment may be in place without the state knowing: read it from the files.
            inner.withLock { inner in
                inner.state = nil
                inner.tails = [:]
            }
            throw error
        }
    }

    private func operations(
        for p: TaskPatch, id: TaskID, in state: borrowing TaskState, entry: Int
    ) throws(StoreError) -> [TaskOperation] {
        if p.deleted {
            guard state.isLive(id) else { return [] }
            return [.remove(id, observed: state.observedDots(of: id).sorted())]
        }
        guard let existing = state.task(id) else {
            guard let title = p.title else {
                throw .invalidArgument("entry \(entry) creates task \(id) but has no \"title\"")
            }
            try checkLinks(of: p, id: id, entry: entry)
            var meta = (p.meta ?? [:]).filter { !PlanningKey.all.contains($0.key) }
            for (key, value) in Self.planningWrites(of: p) { meta[key] = value }
            var ops = NewTask(
                title: title, notes: p.notes ?? nil, priority: p.priority ?? nil, due: p.due ?? nil,
                list: p.list ?? nil, tags: p.tags ?? [], meta: meta, dependencies: p.dependencies ?? []
            ).operations(id: id)
            if p.done == true { ops.append(.set(id, .done(true))) }
            return ops
        }
        var ops: [TaskOperation] = []
        if existing.isDeleted { ops.append(.add(id)) }
        if let v = p.title, v != existing.title { ops.append(.set(id, .title(v))) }
        if let v = p.notes, v != existing.notes { ops.append(.set(id, .notes(v))) }
        if let v = p.priority, v != existing.priority { ops.append(.set(id, .priority(v))) }
        if let v = p.due, v != existing.due { ops.append(.set(id, .due(v))) }
        if let v = p.list, v != existing.list { ops.append(.set(id, .list(v))) }
        if let v = p.done, v != existing.isDone { ops.append(.set(id, .done(v))) }
        if let meta = p.meta?.filter({ !PlanningKey.all.contains($0.key) }) {
            for (k, v) in meta.sorted(by: { $0.key < $1.key }) where existing.meta[k] != v {
                ops.append(.set(id, .meta(key: k, value: v)))
            }
            for k in existing.userMeta.keys.sorted() where meta[k] == nil {
                ops.append(.set(id, .meta(key: k, value: nil)))
            }
        }
        try checkLinks(of: p, id: id, entry: entry)
        for (k, v) in Self.planningWrites(of: p) where existing.meta[k] != v { ops.append(.set(id, .meta(key: k, value: v))) }
        ops += Self.dependencyOperations(p, existing, in: state)
        if let tags = p.tags {
            for tag in Set(tags).subtracting(existing.tags).sorted() { ops.append(.addTag(id, tag)) }
            for tag in Set(existing.tags).subtracting(tags).sorted() {
                let seen = state.records[id]?.tags.observedTags(of: tag) ?? []
                ops.append(.removeTag(id, tag, observed: seen.sorted()))
            }
        }
        return ops
    }

    private func requireTask(_ id: TaskID) throws(StoreError) {
        guard try task(id) != nil else { throw .taskNotFound(id.rawValue) }
    }

    private func validate(_ priority: UInt8?) throws(StoreError) {
        if let p = priority, p > 3 { throw .invalidArgument("priority must be 0 to 3 (3 most urgent), got \(p)") }
    }

    /// Tags that start with U+0001 are dependency elements (``PlanningKey``), not tags.
    private func validate(tags: [String]) throws(StoreError) {
        if tags.contains(where: PlanningKey.isReservedTag) { throw .invalidArgument("a tag cannot start with the control character U+0001") }
    }
}
