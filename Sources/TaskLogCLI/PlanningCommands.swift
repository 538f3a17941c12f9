@_spi(Engine) import TaskModel
import TaskPlanning
@_spi(Engine) import TaskStore

/// `add --quick`, `today` and `top`: tasks as people state them, and what is most urgent.
extension Context {
    /// The options of `add` that a quick add reads from its text instead.
    static let quickAddFields: [any OptionDeclaration] = [Options.due, Options.priority, Options.tag, Options.list, Options.recur, Options.wait, Options.scheduled]

    /// `add -q TEXT…`: the words joined by spaces, read as Spec/cli.md's "Quick add" says.
    func quickAdd() throws -> Int32 {
        let text = try positionals(1...Int.max, "TEXT").joined(separator: " ")
        if let given = Self.quickAddFields.first(where: arguments.given)?.spec.name {
            throw UsageError(message: "--quick reads the \(given) from the text; drop --\(given) or add without --quick")
        }
        var task: NewTask
        do {
            task = try QuickAdd.parse(text).task
        } catch {
            throw UsageError(message: "--quick: \(error.description)")
        }
        task.notes = try arguments.value(Options.notes)
        task.meta.merge(try meta()) { fromText, _ in fromText }
        return try addLinked(task, try PlanningOptions(self))
    }

    /// Adds `task` under the parent and dependencies `planning` names (each resolved from an
    /// id or prefix), as one undoable command, and prints it as `add` does.
    func addLinked(_ task: NewTask, _ planning: PlanningOptions) throws -> Int32 {
        var task = task
        let store = try writableStore()
        task.parent = try planning.parent.map { try store.resolve($0) }
        task.dependencies = try planning.depends.map { try store.resolve($0) }
        let item = try store.undoable("add") { () throws(StoreError) in try store.add(task) }
        reportAdded(item)
        return 0
    }

    /// What `add` prints: the task with `--json`, a line on a terminal, else its id.
    func reportAdded(_ item: TaskItem) {
        if json {
            Output.json(item)
        } else if Self.standardOutputIsTerminal {
            Output.line("Added \(Render.shortID(item.id)) \(TerminalText.escaped(item.title))")
        } else {
            Output.line(item.id.rawValue)
        }
    }

    func top() throws -> Int32 {
        let n = try count(default: 2)
        let now = Int64(Posix.wallClockMilliseconds())
        let today = LocalZone().civil(milliseconds: now).days
        let tasks = try readableStore().map { try Urgency.top(n, in: $0, now: now, today: today) } ?? []
        printTasks(tasks)
        return 0
    }

    /// `today [N]`: the sections of ``TodayView``, then the N most urgent of the rest.
    func today() throws -> Int32 {
        let n = try count(default: 5)
        let view = try readableStore().map { try TodayView($0, next: n) } ?? TodayView()
        if json {
            Output.bytes(view.json)
        } else {
            printSections(view)
        }
        return 0
    }

    private func printSections(_ view: TodayView) {
        let headings: [TodayView.Section: String] = [
            .overdue: "Overdue", .dueToday: "Due today", .scheduled: "Scheduled", .inProgress: "In progress", .next: "Next",
        ]
        var printed = false
        for section in TodayView.Section.allCases where !view[section].isEmpty {
            Output.line((printed ? "\n" : "") + headings[section]!)
            Output.line(Render.table(view[section]))
            printed = true
        }
        if !printed { Output.line("no tasks") }
    }

    /// The optional count N, a whole number ≥ 0.
    private func count(default n: Int) throws -> Int {
        guard let first = try positionals(0...1, "").first else { return n }
        guard let v = Int(first), v >= 0 else { throw UsageError(message: "N must be a whole number ≥ 0, got '\(DateInput.shown(first))'") }
        return v
    }
}
