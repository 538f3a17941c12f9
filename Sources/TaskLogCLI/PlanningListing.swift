#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Which tasks `list` shows by their wait date: those still waiting are hidden, unless
/// `--all` shows them with the rest or `--waiting` shows only them.
struct WaitingRule {
    enum Mode { case hide, include, only }
    let mode: Mode
    let clock = DueClock()

    init(_ context: Context) throws(UsageError) {
        let a = context.arguments
        if a.has(Flags.waiting) && a.has(Flags.done) { throw UsageError(message: "--waiting and --done exclude each other") }
        mode = a.has(Flags.waiting) ? .only : a.has(Flags.all) ? .include : .hide
    }

    func admits(_ t: TaskItem) -> Bool { admits(waitUntil: t.waitUntil) }

    func admits(waitUntil: Due?) -> Bool {
        guard mode != .include else { return true }
        let waiting = waitUntil?.isAhead(now: clock.now, today: clock.today) ?? false
        return waiting == (mode == .only)
    }
}

extension Context {
    /// A table of `tasks` with subtasks under their parents and the STATE column.
    func printOutline(_ tasks: [TaskItem], tree: TaskTree) {
        guard !tasks.isEmpty else { return Output.line("no tasks") }
        let rows = tree.outline(tasks)
        let clock = DueClock()
        let states = rows.map { Render.state(of: $0.task, in: tree, clock: clock) }
        Output.line(Render.table(rows.map(\.task), depths: rows.map(\.depth), states: states))
    }

    /// Before `done` marks tasks with open subtasks (Spec/cli.md, "Subtasks, dependencies and
    /// dates"): on a terminal, asks; otherwise, unless `--force`, refuses, writing nothing,
    /// and with `--json` prints the open subtasks as `{"openChildren":[…]}`.
    func confirmOpenSubtasks(_ ids: [TaskID], in store: TaskStore) throws {
        guard !arguments.has(Flags.force) else { return }
        let tree = try store.tree(around: ids)
        let open = ids.compactMap { id -> (TaskItem, [TaskItem])? in
            guard let t = tree.task(id), !t.isDone else { return nil }
            let children = tree.children(of: id).filter { !$0.isDone }
            return children.isEmpty ? nil : (t, children)
        }
        guard !open.isEmpty else { return }
        if !json && Self.standardOutputIsTerminal && isatty(0) == 1 {
            for (t, children) in open {
                Output.out("\(Render.shortID(t.id)) \(TerminalText.escaped(t.title)) has \(Render.count(children.count, "open subtask")); mark it done anyway? [y/N] ")
                guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
                    throw CommandFailure(message: "nothing was marked done")
                }
            }
            return
        }
        if json { Output.line(Self.openChildrenJSON(open)) }
        let (t, children) = open[0]
        throw CommandFailure(message: "task \(Render.shortID(t.id)) has \(Render.count(children.count, "open subtask")) (\(children.prefix(3).map { Render.shortID($0.id) }.joined(separator: ", "))); nothing was marked done: complete them first, or give --force")
    }

    /// `{"openChildren":[{"id":…,"children":[…]}]}`.
    private static func openChildrenJSON(_ open: [(TaskItem, [TaskItem])]) -> String {
        var w = JSONWriter()
        w.raw("{\"openChildren\":[")
        for (i, (t, children)) in open.enumerated() {
            w.raw(i == 0 ? "{\"id\":" : ",{\"id\":")
            w.id(t.id)
            w.raw(",\"children\":[")
            for (j, c) in children.enumerated() {
                if j > 0 { w.raw(",") }
                w.id(c.id)
            }
            w.raw("]}")
        }
        w.raw("]}")
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
