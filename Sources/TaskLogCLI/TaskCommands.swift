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
        if arguments.has("quick") { return try quickAdd() }
        let words = try positionals(1...Int.max, "TITLE")
        let title = words.joined(separator: " ")
        guard !title.isEmpty else { throw UsageError(message: "the title must not be empty") }
        var meta = try meta()
        if let rule = try recurrence() { meta[PlanningKey.recur] = rule.text }
        let planning = try PlanningOptions(self)
        var task = NewTask(
            title: title, notes: arguments.value("notes"), priority: try priority(), due: try due(),
            list: arguments.value("list"), tags: try tags(arguments.all("tag")), meta: meta,
            wait: planning.wait, scheduled: planning.scheduled)
        let store = try writableStore()
        task.parent = try planning.parent.map { try store.resolve($0) }
        task.dependencies = try planning.depends.map { try store.resolve($0) }
        let item = try store.undoable("add") { () throws(StoreError) in try store.add(task) }
        reportAdded(item)
        return 0
    }

    func list() throws -> Int32 {
        let words = try positionals(0...Int.max, "")
        if arguments.has("deleted") { return try listDeleted(words) }
        if arguments.has("all") && arguments.has("done") { throw UsageError(message: "--all and --done exclude each other") }
        guard let sort = TaskQuery.SortKey(rawValue: arguments.value("sort") ?? "created") else {
            throw UsageError(message: "--sort must be created, priority, due or title")
        }
        var limit: Int?
        if let l = arguments.value("limit") {
            guard let n = Int(l), n >= 0 else { throw UsageError(message: "--limit must be a whole number ≥ 0") }
            limit = n
        }
        let filter = try ListFilter(self, words: words)
        let query = TaskQuery(
            status: arguments.has("all") ? .all : arguments.has("done") ? .done : .open,
            list: filter == nil ? arguments.value("list") : nil,
            sort: sort)
        guard let store = try readableStore() else {
            printTasks([])
            return 0
        }
        let waiting = try WaitingRule(self)
        if !json {
            let everything = try store.tasks(TaskQuery(status: .all))
            let kept = query.apply(to: everything).filter { (filter?.admits($0) ?? true) && waiting.admits($0) }
            report(store)
            printOutline(Array(kept.prefix(limit ?? kept.count)), tree: try store.tree(of: everything))
        } else if let filter {
            var sink = FilteringSink(filter)
            try store.scanTasks(query, into: &sink)
            report(store)
            let kept = sink.kept.filter(waiting.admits)
            printTasks(Array(kept.prefix(limit ?? kept.count)))
        } else {
            // Written as the tasks come, in pieces: a long list never sits whole in memory.
            var w = WaitingSink(JSONTaskArrayWriter(), waiting, limit: limit)
            try store.scanTasks(query, into: &w)
            report(store)
            w.sink.finish()
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
            let planning = Render.planningLines(of: task, in: try store.tree(), clock: DueClock())
            Output.line(Render.detail(task, planning: planning))
        }
        report(store)
        return 0
    }

    func edit() throws -> Int32 {
        _ = try positionals(1...1, "task ID")
        var writes: [FieldWrite] = []
        func exclusive(_ a: String, _ b: String) throws(UsageError) {
            if arguments.value(a) != nil && arguments.has(b) { throw UsageError(message: "--\(a) and --\(b) exclude each other") }
        }
        try exclusive("notes", "no-notes")
        try exclusive("due", "no-due")
        try exclusive("priority", "no-priority")
        try exclusive("list", "no-list")
        if let t = arguments.value("title") {
            guard !t.isEmpty else { throw UsageError(message: "the title must not be empty") }
            writes.append(.title(t))
        }
        if let n = arguments.value("notes") { writes.append(.notes(n)) }
        if arguments.has("no-notes") { writes.append(.notes(nil)) }
        if let d = try due() { writes.append(.due(d)) }
        if arguments.has("no-due") { writes.append(.due(nil)) }
        if let p = try priority() { writes.append(.priority(p)) }
        if arguments.has("no-priority") { writes.append(.priority(nil)) }
        if let l = arguments.value("list") { writes.append(.list(l)) }
        if arguments.has("no-list") { writes.append(.list(nil)) }
        for (k, v) in try meta().sorted(by: { $0.key < $1.key }) { writes.append(.meta(key: k, value: v)) }
        for k in arguments.all("unset-meta") { writes.append(.meta(key: k, value: nil)) }
        if let rule = try recurrence() { writes.append(.meta(key: PlanningKey.recur, value: rule.text)) }
        if arguments.has("no-recur") { writes.append(.meta(key: PlanningKey.recur, value: nil)) }
        let planning = try PlanningOptions(self)
        guard !writes.isEmpty || !planning.isEmpty else {
            throw UsageError(message: "nothing to change; give at least one of --title, --notes, --due, --priority, --list, --meta, --recur, --parent, --depends, --wait, --scheduled, --start, --stop")
        }
        let store = try writableStore()
        let id = try namedIDs(store)[0]
        writes += try planning.writes(store)
        try writing("edit", "Edited", [id], in: store, jsonArray: false) {
            if try !store.editIfLive(id, writes) { try store.edit(try ids(store)[0], writes) }
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
            let list = try store.liveTasks(Set(named)).count == Set(named).count ? named : try ids(store)
            if done { try store.completeAndRecur(list, today: today) } else { try store.reopen(list) }
        }
        return 0
    }

    func remove() throws -> Int32 {
        let store = try writableStore()
        let named = try namedIDs(store)
        let hint = Self.standardOutputIsTerminal && !json ? "  (tasklog undo brings it back)" : ""
        try writing("rm", "Deleted", named, in: store, detail: hint) {
            if try !store.removeIfLive(named) { try store.remove(try ids(store)) }
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

    /// The priorities by name: `high` is the most urgent, 3; `none` is the least, 0.
    static let priorityNames: [String: UInt8] = ["none": 0, "low": 1, "medium": 2, "high": 3]

    /// `--priority` as 0 to 3 or by name (``priorityNames``), or nil when it is not given.
    func priority() throws(UsageError) -> UInt8? {
        guard let p = arguments.value("priority") else { return nil }
        guard let v = UInt8(p).flatMap({ $0 <= 3 ? $0 : nil }) ?? Self.priorityNames[p.lowercased()] else {
            throw UsageError(message: "--priority must be 0, 1, 2 or 3 (3 most urgent) or none, low, medium or high, got '\(DateInput.shown(p))'")
        }
        return v
    }

    func due() throws(UsageError) -> Due? { try date("due") }

    /// The date option `name` as people type it (``DateInput``), or nil when it is not given.
    func date(_ name: String) throws(UsageError) -> Due? {
        guard let d = arguments.value(name) else { return nil }
        guard let v = DateInput.parse(d) else { throw UsageError(message: DateInput.refusal(name, d)) }
        return v
    }

    func recurrence() throws(UsageError) -> RecurrenceRule? {
        guard let text = arguments.value("recur") else { return nil }
        guard let rule = RecurrenceRule(text) else {
            throw UsageError(message: "--recur takes daily, weekly, monthly, yearly or every N days|weeks|months|years, got '\(text)'")
        }
        return rule
    }

    func tags(_ list: [String]) throws(UsageError) -> [String] {
        for t in list where t.isEmpty { throw UsageError(message: "a tag must not be empty") }
        return list
    }

    func meta() throws(UsageError) -> [String: String] {
        var out: [String: String] = [:]
        for kv in arguments.all("meta") {
            guard let eq = kv.firstIndex(of: "="), eq != kv.startIndex else {
                throw UsageError(message: "--meta takes KEY=VALUE, got '\(kv)'")
            }
            out[String(kv[..<eq])] = String(kv[kv.index(after: eq)...])
        }
        return out
    }
}
