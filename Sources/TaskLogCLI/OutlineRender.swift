@_spi(Engine) import TaskModel

/// How listings and `show` render subtasks, dependencies and dates (Spec/cli.md, "Subtasks,
/// dependencies and dates").
extension Render {
    /// The deepest level a table indents; deeper subtasks are shown at this level.
    static let deepestIndent = 16

    /// The STATE cell: `started` for an open task in progress, `blocked` while a dependency is
    /// open, `waiting` while its wait date is ahead, and `2/5 done` on a task with subtasks.
    static func state(of t: TaskItem, in tree: TaskTree, clock: DueClock) -> String {
        state(of: t, blocked: !t.isDone && tree.isBlocked(t.id), progress: tree.progress(of: t.id), clock: clock)
    }

    /// The STATE cell of a task in a store where no task names a parent or a dependency.
    static func state(ofUnlinked t: TaskItem, clock: DueClock) -> String {
        state(of: t, blocked: false, progress: (0, 0), clock: clock)
    }

    private static func state(of t: TaskItem, blocked: Bool, progress: (done: Int, total: Int), clock: DueClock) -> String {
        state(
            started: !t.isDone && t.startedAt != nil, blocked: blocked, waiting: t.isWaiting(now: clock.now, today: clock.today),
            progress: progress)
    }

    /// The STATE cell from what it says.
    static func state(started: Bool, blocked: Bool, waiting: Bool, progress: (done: Int, total: Int)) -> String {
        var words: [String] = []
        if started { words.append("started") }
        if blocked { words.append("blocked") }
        if waiting { words.append("waiting") }
        if progress.total > 0 { words.append("\(progress.done)/\(progress.total) done") }
        return words.joined(separator: ", ")
    }

    /// The lines `show` gives about the task's parent, subtasks, dependencies and dates.
    static func planningLines(of t: TaskItem, in tree: TaskTree, clock: DueClock) -> [(String, String)] {
        var lines: [(String, String)] = []
        if let p = tree.parent(of: t.id) {
            lines.append(("parent", mention(p, tree)))
        } else if let named = t.parent {
            let why = tree.cutLinks.contains(t.id) ? "\(mention(named, tree)): the link was cut: it closed a cycle" : "\(named) is not on the list"
            lines.append(("parent", "none (\(why))"))
        }
        let children = tree.children(of: t.id)
        if !children.isEmpty {
            lines.append(("subtasks", "\(children.count { $0.isDone })/\(children.count) done"))
            for c in children { lines.append(("", (c.isDone ? "[x] " : "[ ] ") + mention(c.id, tree))) }
        }
        if !t.dependencies.isEmpty {
            lines.append(("depends on", tree.isBlocked(t.id) ? "blocked: \(tree.openDependencies(of: t.id).count) still open" : "none open"))
            for d in t.dependencies {
                let mark = tree.task(d).map { $0.isDone ? "[x] " : "[ ] " } ?? "[?] "
                lines.append(("", mark + mention(d, tree)))
            }
        }
        for (name, due) in [("wait", t.waitUntil), ("scheduled", t.scheduled)] {
            if let due { lines.append((name, clock.text(due, open: false).text)) }
        }
        if let s = t.startedAt { lines.append(("started", clock.text(s, open: false).text)) }
        return lines
    }

    /// `a5d9ea2f Buy milk`, or the whole id and `(not on the list)` when it is not on the list.
    private static func mention(_ id: TaskID, _ tree: TaskTree) -> String {
        guard let t = tree.task(id) else { return id.rawValue + " (not on the list)" }
        return shortID(id) + " " + TerminalText.escaped(t.title)
    }
}
