@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
import TaskPlanning
@_spi(Engine) import TaskStore

/// The commands that read and write tasks, and the option values they share.
extension Context {
    func initialise() throws -> Int32 {
        _ = try positionals(0...0, "")
        let store = try writableStore()
        try nameDevice(store)
        Output.line(store.replica.hex)
        return 0
    }

    func add() throws -> Int32 {
        if arguments.has(Flags.quick) { return try quickAdd() }
        let words = try positionals(1...Int.max, "TITLE")
        let title = words.joined(separator: " ")
        guard !title.isEmpty else { throw UsageError(message: "the title must not be empty") }
        var meta = try meta()
        if let rule = try arguments.value(Options.recur) { meta[PlanningKey.recur] = rule.text }
        let planning = try PlanningOptions(self)
        let task = NewTask(
            title: title, notes: try arguments.value(Options.notes), priority: try arguments.value(Options.priority),
            due: try arguments.value(Options.due), list: try arguments.value(Options.list), tags: try arguments.values(Options.tag), meta: meta,
            wait: planning.wait, scheduled: planning.scheduled)
        return try addLinked(task, planning)
    }

    func list() throws -> Int32 {
        let words = try positionals(0...Int.max, "")
        if arguments.has(Flags.deleted) { return try listDeleted(words) }
        if arguments.has(Flags.all) && arguments.has(Flags.done) { throw UsageError(message: "--all and --done exclude each other") }
        let sort = try arguments.value(Options.sort) ?? .created
        let limit = try arguments.value(Options.limit)
        let filter = try ListFilter(self, words: words)
        let query = TaskQuery(
            status: arguments.has(Flags.all) ? .all : arguments.has(Flags.done) ? .done : .open,
            list: filter == nil ? try arguments.value(Options.listFilter) : nil,
            sort: sort)
        guard let store = try readableStore() else {
            printTasks([])
            return 0
        }
        let waiting = try WaitingRule(self)
        if json {
            try printJSONListing(store, query, filter, waiting, limit: limit)
        } else if try !printTable(store, query, filter, waiting, limit: limit) {
            // Some task may name a parent or a dependency: subtasks go under their parents,
            // and a task's STATE depends on others, so every task is read.
            let everything = try store.tasks(TaskQuery(status: .all))
            let kept = query.apply(to: everything).filter { (filter?.admits($0) ?? true) && waiting.admits($0) }
            let tree = try store.tree(of: everything)
            report(store)
            printOutline(Array(kept.prefix(limit ?? kept.count)), tree: tree)
        }
        return 0
    }

    func printTasks(_ tasks: [TaskItem]) {
        if json {
            var w = JSONTaskArrayWriter()
            tasks.forEach { w.take($0) }
            w.finish()
        } else if tasks.isEmpty {
            Output.line("no tasks")
        } else {
            Output.line(Render.table(tasks))
        }
    }

    func show() throws -> Int32 {
        _ = try positionals(1...1, "task ID")
        guard let store = try readableStore() else { throw StoreError.taskNotFound(arguments.positionals[0]) }
        var found: TaskItem?
        if let list = try leanly(store, { ids in
            found = try store.liveTasks([ids[0]])[ids[0]]
            return found != nil
        }) {
            found = try store.task(list[0])
        }
        let task = found!
        if json {
            Output.json(task)
        } else {
            let planning = Render.planningLines(of: task, in: try store.tree(around: [task.id]), clock: DueClock())
            Output.line(Render.detail(task, planning: planning))
        }
        report(store)
        return 0
    }

    func edit() throws -> Int32 {
        _ = try positionals(1...1, "task ID")
        var writes: [FieldWrite] = []
        try exclusive(Options.notes, Flags.noNotes)
        try exclusive(Options.due, Flags.noDue)
        try exclusive(Options.priority, Flags.noPriority)
        try exclusive(Options.list, Flags.noList)
        if let t = try arguments.value(Options.title) { writes.append(.title(t)) }
        if let n = try arguments.value(Options.notes) { writes.append(.notes(n)) }
        if arguments.has(Flags.noNotes) { writes.append(.notes(nil)) }
        if let d = try arguments.value(Options.due) { writes.append(.due(d)) }
        if arguments.has(Flags.noDue) { writes.append(.due(nil)) }
        if let p = try arguments.value(Options.priority) { writes.append(.priority(p)) }
        if arguments.has(Flags.noPriority) { writes.append(.priority(nil)) }
        if let l = try arguments.value(Options.list) { writes.append(.list(l)) }
        if arguments.has(Flags.noList) { writes.append(.list(nil)) }
        for (k, v) in try meta().sorted(by: { $0.key < $1.key }) { writes.append(.meta(key: k, value: v)) }
        for k in try arguments.values(Options.unsetMeta) { writes.append(.meta(key: k, value: nil)) }
        if let rule = try arguments.value(Options.recur) { writes.append(.meta(key: PlanningKey.recur, value: rule.text)) }
        if arguments.has(Flags.noRecur) { writes.append(.meta(key: PlanningKey.recur, value: nil)) }
        let planning = try PlanningOptions(self)
        guard !writes.isEmpty || !planning.isEmpty else {
            throw UsageError(message: "nothing to change; give at least one of --title, --notes, --due, --priority, --list, --meta, --recur, --parent, --depends, --wait, --scheduled, --start, --stop")
        }
        let store = try writableStore()
        let id = try namedIDs(store)[0]
        writes += try planning.writes(store)
        try writing("edit", "Edited", [id], in: store, jsonArray: false) {
            try store.edit(id, writes)
            try planning.applyLinks(store, to: id)
        }
        if json, let t = try store.liveTasks([id])[id] { Output.json(t) }
        return 0
    }

    func tag() throws -> Int32 {
        let p = try positionals(2...Int.max, p1Missing)
        var add: [String] = []
        var remove: [String] = []
        for t in p.dropFirst() {
            guard t.count > 1, let sign = t.first, sign == "+" || sign == "-" else {
                throw UsageError(message: "tags are given as +TAG to add or -TAG to remove, got '\(t)'")
            }
            if sign == "+" { add.append(String(t.dropFirst())) } else { remove.append(String(t.dropFirst())) }
        }
        let store = try writableStore()
        let id = try store.resolve(p[0])
        try writing("tag", "Tagged", [id], in: store, detail: "  " + (add.map { "+" + $0 } + remove.map { "-" + $0 }).joined(separator: " ")) {
            try store.tag(id, add: add, remove: remove)
        }
        return 0
    }

    private var p1Missing: String { arguments.positionals.isEmpty ? "task ID" : "+TAG or -TAG" }

    func setDone(_ done: Bool) throws -> Int32 {
        let store = try writableStore()
        let named = try namedIDs(store)
        if done { try confirmOpenSubtasks(named, in: store) }
        // Completing an open recurring task makes its next occurrence (once: the id is fixed).
        let today = LocalZone().civil(milliseconds: Int64(Posix.wallClockMilliseconds())).days
        let current = try named.compactMap { try store.task($0) }
        let already = Set(current.filter { $0.isDone == done }.map(\.id))
        let next = done ? current.filter { !$0.isDone && !$0.isDeleted }.compactMap { TaskStore.nextOccurrence(of: $0, today: today) } : []
        let nextIDs = Set(next.map(\.0))
        let clock = DueClock()
        let describe = { (task: TaskItem) -> (verb: String, detail: String)? in
            if nextIDs.contains(task.id) { return ("Next", task.due.map { "  due " + clock.text($0, open: true).text } ?? "") }
            return already.contains(task.id) ? (done ? "Already done" : "Already open", "") : nil
        }
        try writing(done ? "done" : "reopen", done ? "Completed" : "Reopened", named + next.map(\.0), in: store, describe: describe) {
            if done { try store.completeAndRecur(named, today: today) } else { try store.reopen(named) }
        }
        return 0
    }

    func remove() throws -> Int32 {
        let store = try writableStore()
        let named = try namedIDs(store)
        let hint = Self.standardOutputIsTerminal && !json ? "  (tasklog undo brings it back)" : ""
        try writing("rm", "Deleted", named, in: store, detail: hint) {
            try store.remove(named)
        }
        return 0
    }

    func restore() throws -> Int32 {
        let store = try writableStore()
        let ids = try ids(store, includeDeleted: true)
        try writing("restore", "Restored", ids, in: store) {
            for id in ids { try store.restore(id) }
        }
        return 0
    }

    /// `list --deleted [WORDS…]`: deleted tasks, oldest first, with their titles.
    func listDeleted(_ words: [String]) throws -> Int32 {
        guard let store = try readableStore() else {
            printTasks([])
            return 0
        }
        let filter = try ListFilter(self, words: words)
        let deleted = try store.state().allTasks.filter { $0.isDeleted && (filter?.admits($0) ?? true) }
        report(store)
        printTasks(TaskQuery(status: .all).apply(to: deleted))
        return 0
    }

    // MARK: Values

    /// Refuses `value` given with `clearing`, the flag that removes what it sets.
    func exclusive<Value>(_ value: Option<Value>, _ clearing: Flag) throws(UsageError) {
        if arguments.given(value) && arguments.has(clearing) {
            throw UsageError(message: "--\(value.spec.name) and --\(clearing.spec.name) exclude each other")
        }
    }

    /// The `--meta K=V` entries, a later one for a key replacing an earlier one.
    func meta() throws(UsageError) -> [String: String] {
        var out: [String: String] = [:]
        for (key, value) in try arguments.values(Options.meta) { out[key] = value }
        return out
    }
}
