@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Random user actions on one store: add, edit each field, tag and untag, done and reopen,
/// delete and restore, import, batches. After each, what the user sees must show the write
/// (a replica always reads its own writes: its clock is past everything it has seen).
enum SimWorkload {
    static let tags = ["home", "work", "errand", "later", "x"]
    static let lists = ["inbox", "shop", "work"]
    static let metaKeys = ["aisle", "who"]

    /// What one action did.
    struct Outcome {
        var action: String
        /// A read-back that did not show the write.
        var problem: String?
    }

    /// Performs one random action through `store`.
    static func perform(on store: TaskStore, _ rng: inout SimRandom) throws(StoreError) -> Outcome {
        let all = try store.state().allTasks.sorted { $0.id < $1.id }
        let live = all.filter { !$0.isDeleted }
        let deleted = all.filter(\.isDeleted)
        let action = rng.weighted([
            ("add", all.count < 3 ? 12 : 5), ("edit", all.isEmpty ? 0 : 8), ("tag", all.isEmpty ? 0 : 3),
            ("done", live.isEmpty ? 0 : 2), ("reopen", live.isEmpty ? 0 : 1), ("rm", live.isEmpty ? 0 : 2),
            ("restore", deleted.isEmpty ? 0 : 2), ("import", 1), ("batch", all.isEmpty ? 0 : 2),
        ])
        switch action {
        case "add": return try add(to: store, &rng)
        case "edit": return try edit(oneOf: all, in: store, &rng)
        case "tag": return try tag(oneOf: all, in: store, &rng)
        case "done", "reopen": return try mark(done: action == "done", someOf: live, in: store, &rng)
        case "rm": return try remove(oneOf: live, from: store, &rng)
        case "restore": return try restore(oneOf: deleted, in: store, &rng)
        case "import": return try importPatches(touching: all, into: store, &rng)
        default: return try batch(oneOf: all, in: store, &rng)
        }
    }

    /// Adds a task with random fields.
    private static func add(to store: TaskStore, _ rng: inout SimRandom) throws(StoreError) -> Outcome {
        let id = TaskID.random(using: &rng)
        let task = NewTask(
            title: title(&rng), notes: rng.chance(0.3) ? "n\(rng.int(0...99))" : nil,
            priority: rng.chance(0.4) ? UInt8(rng.int(0...3)) : nil, due: rng.chance(0.3) ? due(&rng) : nil,
            list: rng.chance(0.3) ? rng.pick(lists) : nil, tags: Array(tags.filter { _ in rng.chance(0.3) }),
            meta: rng.chance(0.2) ? [rng.pick(metaKeys): "m\(rng.int(0...9))"] : [:])
        try store.add(task, id: id)
        return Outcome(action: "add \(id)", problem: try readBack(store, id) { t in
            t.title == task.title && !t.isDeleted && Set(t.tags) == Set(task.tags) ? nil : "the new task reads \(t)"
        })
    }

    /// Writes one to three random fields of one task.
    private static func edit(oneOf all: [TaskItem], in store: TaskStore, _ rng: inout SimRandom) throws(StoreError) -> Outcome {
        let t = hot(all, &rng)
        var fields = Array(0...6)
        fields.shuffle(using: &rng)
        let writes = fields.prefix(rng.int(1...3)).sorted().map { write(field: $0, &rng) }
        try store.edit(t.id, writes)
        return Outcome(action: "edit \(t.id) \(writes.map { "\($0)" }.joined(separator: ", "))", problem: try readBack(store, t.id) { now in
            let wrong = writes.filter { !shows(now, $0) }
            return wrong.isEmpty ? nil : "after writing \(wrong.map { "\($0)" }) the task reads \(now)"
        })
    }

    /// Adds and removes random tags of one task.
    private static func tag(oneOf all: [TaskItem], in store: TaskStore, _ rng: inout SimRandom) throws(StoreError) -> Outcome {
        let t = hot(all, &rng)
        let add = tags.filter { _ in rng.chance(0.25) }
        let remove = t.tags.filter { !add.contains($0) && rng.chance(0.5) }
        try store.tag(t.id, add: add, remove: remove)
        return Outcome(action: "tag \(t.id) +\(add) -\(remove)", problem: try readBack(store, t.id) { now in
            add.allSatisfy(now.tags.contains) && !remove.contains(where: now.tags.contains) ? nil : "after +\(add) -\(remove) the tags are \(now.tags)"
        })
    }

    /// Completes (`done`) or reopens one or two live tasks.
    private static func mark(done: Bool, someOf live: [TaskItem], in store: TaskStore, _ rng: inout SimRandom) throws(StoreError) -> Outcome {
        let action = done ? "done" : "reopen"
        let ids = Array(Set((0..<rng.int(1...2)).map { _ in hot(live, &rng).id })).sorted()
        if done { try store.complete(ids) } else { try store.reopen(ids) }
        for id in ids {
            if let p = try readBack(store, id, { $0.isDone == done ? nil : "it reads done=\($0.isDone)" }) {
                return Outcome(action: "\(action) \(ids)", problem: p)
            }
        }
        return Outcome(action: "\(action) \(ids)")
    }

    /// Removes one live task.
    private static func remove(oneOf live: [TaskItem], from store: TaskStore, _ rng: inout SimRandom) throws(StoreError) -> Outcome {
        let t = hot(live, &rng)
        try store.remove([t.id])
        return Outcome(action: "rm \(t.id)", problem: try readBack(store, t.id) { $0.isDeleted ? nil : "it is still on the list" })
    }

    /// Restores one deleted task.
    private static func restore(oneOf deleted: [TaskItem], in store: TaskStore, _ rng: inout SimRandom) throws(StoreError) -> Outcome {
        let t = rng.pick(deleted)
        try store.restore(t.id)
        return Outcome(action: "restore \(t.id)", problem: try readBack(store, t.id) { $0.isDeleted ? "it is still deleted" : nil })
    }

    /// Imports one to three task forms, for known tasks of `all` or new ones.
    private static func importPatches(touching all: [TaskItem], into store: TaskStore, _ rng: inout SimRandom) throws(StoreError) -> Outcome {
        var patches: [TaskPatch] = []
        for _ in 0..<rng.int(1...3) {
            var p = patchTarget(among: all, &rng)
            guard !patches.contains(where: { $0.id == p.id }) else { continue }
            randomFields(of: &p, &rng)
            patches.append(p)
        }
        try store.apply(patches)
        for p in patches {
            if let problem = try readBack(store, p.id!, { t in
                (p.title.map { $0 == t.title } ?? true) && (p.done.map { $0 == t.isDone } ?? true)
                    && (p.priority.map { $0 == t.priority } ?? true) && (p.tags.map { Set($0) == Set(t.tags) } ?? true)
                    && !t.isDeleted ? nil : "after importing \(p) the task reads \(t)"
            }) {
                return Outcome(action: "import \(patches.count)", problem: problem)
            }
        }
        return Outcome(action: "import \(patches.count)")
    }

    /// A form naming a task of `all` (half the time, when there is one), or a new task with a title.
    private static func patchTarget(among all: [TaskItem], _ rng: inout SimRandom) -> TaskPatch {
        if !all.isEmpty && rng.chance(0.5) { return TaskPatch(id: hot(all, &rng).id) }
        var p = TaskPatch(id: TaskID.random(using: &rng))
        p.title = title(&rng)
        return p
    }

    /// Sets random fields of the form `p`.
    private static func randomFields(of p: inout TaskPatch, _ rng: inout SimRandom) {
        if rng.chance(0.5) { p.title = title(&rng) }
        if rng.chance(0.3) { p.priority = .some(rng.chance(0.2) ? nil : UInt8(rng.int(0...3))) }
        if rng.chance(0.3) { p.done = rng.chance(0.5) }
        if rng.chance(0.3) { p.tags = tags.filter { _ in rng.chance(0.3) } }
        if rng.chance(0.2) { p.list = .some(rng.chance(0.3) ? nil : rng.pick(lists)) }
    }

    /// Several commits in one write, and two writes of one field in one commit (the later
    /// operation, by sequence number, wins).
    private static func batch(oneOf all: [TaskItem], in store: TaskStore, _ rng: inout SimRandom) throws(StoreError) -> Outcome {
        let t = hot(all, &rng)
        let (first, second) = (title(&rng), title(&rng))
        let p = UInt8(rng.int(0...3))
        try store.commit(batch: [[.set(t.id, .title(first)), .set(t.id, .title(second))], [.set(t.id, .priority(p))]])
        return Outcome(action: "batch \(t.id)", problem: try readBack(store, t.id) { now in
            now.title == second && now.priority == p ? nil : "after titles \(first), \(second) and priority \(p) it reads \(now)"
        })
    }

    /// Most actions go to a few tasks, so concurrent writes to one field are common.
    static func hot(_ tasks: [TaskItem], _ rng: inout SimRandom) -> TaskItem {
        rng.chance(0.6) ? rng.pick(tasks.prefix(3)) : rng.pick(tasks)
    }

    static func title(_ rng: inout SimRandom) -> String { "t\(rng.int(0...9999))" }

    static func due(_ rng: inout SimRandom) -> Due {
        rng.chance(0.5) ? .date(days: Int64(rng.int(20_000...20_500))) : .instant(milliseconds: Int64(rng.int(1_700_000_000...1_800_000_000)) * 1000)
    }

    static func write(field: Int, _ rng: inout SimRandom) -> FieldWrite {
        switch field {
        case 0: .title(title(&rng))
        case 1: .notes(rng.chance(0.3) ? nil : "n\(rng.int(0...99))")
        case 2: .done(rng.chance(0.5))
        case 3: .priority(rng.chance(0.2) ? nil : UInt8(rng.int(0...3)))
        case 4: .due(rng.chance(0.2) ? nil : due(&rng))
        case 5: .list(rng.chance(0.3) ? nil : rng.pick(lists))
        default: .meta(key: rng.pick(metaKeys), value: rng.chance(0.3) ? nil : "m\(rng.int(0...9))")
        }
    }

    /// Whether the task shows the write.
    static func shows(_ t: TaskItem, _ w: FieldWrite) -> Bool {
        switch w {
        case .title(let v): t.title == v
        case .notes(let v): t.notes == v
        case .done(let v): t.isDone == v
        case .priority(let v): t.priority == v
        case .due(let v): t.due == v
        case .list(let v): t.list == v
        case .meta(let k, let v): t.meta[k] == v
        case .unknown: true
        }
    }

    private static func readBack(_ store: TaskStore, _ id: TaskID, _ check: (TaskItem) -> String?) throws(StoreError) -> String? {
        guard let t = try store.task(id) else { return "task \(id) is gone right after writing it" }
        if holdsFarFutureWrite(t, in: store) { return nil }
        return check(t).map { "read-your-writes: \($0)" }
    }

    /// Whether `t` holds a write stamped more than a day past the wall clock of `store` (a
    /// replica whose clock runs years ahead wrote it). An edit may then lose to that write,
    /// as Spec/crdt.md says, so read-your-writes is not expected of the task.
    static func holdsFarFutureWrite(_ t: TaskItem, in store: TaskStore) -> Bool {
        HybridLogicalClock.admitted(t.updatedAt, wall: store.options.wallClock()) < t.updatedAt
    }
}
