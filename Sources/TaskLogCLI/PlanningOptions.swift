@_spi(Engine) import TaskModel
import TaskPlanning
@_spi(Engine) import TaskStore

/// The subtask, dependency and date options of `add` and `edit` (Spec/cli.md, "Subtasks,
/// dependencies and dates"), read in one place; ids are resolved once the store is open.
struct PlanningOptions {
    var parent: String?
    var noParent = false
    var depends: [String] = []
    var noDepends: [String] = []
    var wait: Due?
    var noWait = false
    var scheduled: Due?
    var noScheduled = false
    var start = false
    var stop = false

    init(_ context: Context) throws(UsageError) {
        let a = context.arguments
        try context.exclusive(Options.parent, Flags.noParent)
        try context.exclusive(Options.wait, Flags.noWait)
        try context.exclusive(Options.scheduled, Flags.noScheduled)
        if a.has(Flags.start) && a.has(Flags.stop) { throw UsageError(message: "--start and --stop exclude each other") }
        parent = try a.value(Options.parent)
        noParent = a.has(Flags.noParent)
        depends = Self.ids(try a.values(Options.depends))
        noDepends = Self.ids(try a.values(Options.noDepends))
        wait = try a.value(Options.wait)
        noWait = a.has(Flags.noWait)
        scheduled = try a.value(Options.scheduled)
        noScheduled = a.has(Flags.noScheduled)
        (start, stop) = (a.has(Flags.start), a.has(Flags.stop))
    }

    /// Ids given as repeated options, each possibly a comma-separated list.
    private static func ids(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",").map(String.init) }.filter { !$0.isEmpty }
    }

    var isEmpty: Bool {
        parent == nil && !noParent && depends.isEmpty && noDepends.isEmpty && wait == nil && !noWait
            && scheduled == nil && !noScheduled && !start && !stop
    }

    /// The register writes these options ask for, the parent resolved in `store`.
    func writes(_ store: TaskStore) throws -> [FieldWrite] {
        var writes: [FieldWrite] = []
        if let parent { writes.append(.parent(try store.resolve(parent))) }
        if noParent { writes.append(.parent(nil)) }
        if let wait { writes.append(.wait(wait)) }
        if noWait { writes.append(.wait(nil)) }
        if let scheduled { writes.append(.scheduled(scheduled)) }
        if noScheduled { writes.append(.scheduled(nil)) }
        return writes
    }

    /// Applies the dependency and start options to `id`.
    func applyLinks(_ store: TaskStore, to id: TaskID) throws {
        if !depends.isEmpty || !noDepends.isEmpty {
            let current = try store.task(id)?.dependencies ?? []
            let added = try depends.map { try store.resolve($0) }
            let removed = try noDepends.map { try Self.dependency($0, among: current, store) }
            try store.depend(id, on: added, removing: removed)
        }
        if start { try store.start([id]) }
        if stop { try store.stop([id]) }
    }

    /// The dependency `text` names: one of `current` it is or starts (4 characters at least),
    /// a task on the list, or else a whole id (of a task this store may not know).
    private static func dependency(_ text: String, among current: [TaskID], _ store: TaskStore) throws -> TaskID {
        if let id = TaskID(text), current.contains(id) { return id }
        let matching = current.filter { $0.rawValue.hasPrefix(text) }
        if text.utf8.count >= 4, matching.count == 1 { return matching[0] }
        if let whole = TaskID(text), try store.task(whole) == nil { return whole }
        return try store.resolve(text)
    }
}

extension Context {
    /// `start ID…` and `stop ID…`: marks tasks in progress as of now, or no longer.
    func setStarted(_ started: Bool) throws -> Int32 {
        let store = try writableStore()
        let named = try namedIDs(store)
        let before = try store.liveTasks(Set(named))
        let unchanged = Set(named.filter { (before[$0]?.startedAt != nil) == started })
        let describe = { (t: TaskItem) -> (verb: String, detail: String)? in
            unchanged.contains(t.id) ? (started ? "Already started" : "Not started", "") : nil
        }
        try writing(started ? "start" : "stop", started ? "Started" : "Stopped", named, in: store, describe: describe) {
            if started { try store.start(named) } else { try store.stop(named) }
        }
        return 0
    }
}
