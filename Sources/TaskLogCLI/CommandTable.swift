/// Every command of the CLI contract, in the order help and the README list them.
package enum Commands {
    static var all: [Command] { taskCommands + storeCommands + syncCommands }

    /// The command called `name`; only the group that holds it is built.
    static func named(_ name: String) -> Command? {
        for group in [{ taskCommands }, { storeCommands }, { syncCommands }] {
            if let command = group().first(where: { $0.name == name }) { return command }
        }
        return nil
    }

    private static let dateForms = "Dates, in local time: today, tomorrow, yesterday, a weekday (the next one; also next tue), next week (Monday), eow, eom, +3d, +2w, +1m, +1y, in 3 days, 12-24, 12/24 (day first in day-first locales such as en_GB), 2026-12-24 (a day, no time zone); any of these then a time such as 9:00, 17:30, 9am, 5:30pm or noon, 2026-12-24T09:00 (a local time); or an ISO-8601 instant such as 2026-12-24T09:00:00Z."
    private static let recurrence = "Recurring: completing a task with --recur makes its next occurrence, due one interval after its due date (or after today), once on every device."
    private static let quickAdd = "Quick add: #tag, +list, !0 to !3 or !high, due:D, wait:D, sched:D anywhere; a date and a rule such as every week or daily at the end. \\word or \"quoted words\" stay in the title. Quote TEXT with single quotes in a shell. Example: tasklog add -q 'Buy milk tomorrow #shop +groceries !2 every week'"
    private static let urgency = "Urgency: overdue tasks first, then due soon and priority weigh in (a task due today stays above one due in four weeks whatever its priority); in progress and scheduled add to it; blocked tasks come last (Spec/cli.md, Urgency)."
    private static let priorities = "Priorities: 0 to 3, 3 the most urgent, or by name: none 0, low 1, medium 2, high 3; a task without one has no priority."

    private static let planning = "Subtasks: --parent puts a task under another; list indents it there and shows 2/5 done on the parent. --depends names tasks it waits for: it is blocked while one is open. --wait hides it from list and top until that date; --scheduled plans it for one."

    private typealias O = Options
    private typealias F = Flags

    /// `[--a]` for each option: the options a form may add, none required.
    static func optional<each D: OptionDeclaration>(_ options: repeat each D) -> [UsagePart] {
        var parts: [UsagePart] = []
        for option in repeat each options { parts.append(.optional(option)) }
        return parts
    }

    /// The subtask, dependency and date options of add (`editing`: and their removals, for edit).
    private static func planningOptions(editing: Bool) -> [UsagePart] {
        guard editing else { return optional(O.parent, O.depends, O.wait, O.scheduled) }
        return [.oneOf(O.parent, F.noParent), .optional(O.depends), .optional(O.noDepends), .oneOf(O.wait, F.noWait),
                .oneOf(O.scheduled, F.noScheduled), .oneOf(F.start, F.stop)]
    }

    private static let taskCommands: [Command] = [
        Command(name: "init", forms: [.init("init", optional(O.name), summary: "create the store; print the replica id")]) { try $0.initialise() },
        Command(
            name: "add",
            forms: [
                .init(
                    "add TITLE", optional(O.notes, O.due, O.priority, O.tag, O.list, O.meta, O.recur) + planningOptions(editing: false) + optional(F.json),
                    summary: "add a task; print only its id (with --json, the task)"),
                .init(
                    "add", [.required(F.quick), .words("TEXT")] + optional(O.notes, O.meta, O.parent, O.depends, F.json),
                    summary: "add the task TEXT states: Buy milk tomorrow #shop +groceries !2 every week"),
            ],
            details: [
                dateForms + " " + priorities, recurrence, planning,
                "Example: tasklog add Buy milk --due 2026-12-24 --priority 2 --tag shop",
                quickAdd,
            ]
        ) { try $0.add() },
        Command(
            name: "list",
            forms: [.init(
                "list [WORD…]",
                [.oneOf(F.all, F.done, F.deleted, F.waiting)]
                    + optional(O.tagFilter, O.listFilter, F.overdue, O.dueBefore, O.dueAfter, O.sort, O.limit, F.json),
                summary: "open tasks by default, subtasks under their parents, or those whose title or notes hold every WORD; overdue, due-today, blocked and started tasks are marked")],
            details: [
                "Words match title and notes ignoring case and accents: 'cafe' finds 'Café'.", dateForms,
                "STATE says started, blocked (a dependency is open), waiting, or 2/5 done on a task with subtasks.",
                "Example: tasklog list milk --tag shop --due-before friday",
            ]
        ) { try $0.list() },
        Command(
            name: "search",
            forms: [.init(
                "search WORD…", [.oneOf(F.all.helped("open and done tasks"), F.done, F.deleted.helped("deleted tasks"))]
                    + optional(O.tagFilter.helped("only tasks with this tag"), O.listFilter, F.json),
                summary: "list the tasks whose title or notes hold every WORD")],
            details: ["Words match ignoring case and accents. Example: tasklog search cafe"]
        ) { try $0.list() },
        Command(name: "show", forms: [.init("show ID", optional(F.json), summary: "one task")]) { try $0.show() },
        Command(
            name: "edit",
            forms: [.init(
                "edit ID",
                optional(O.title) + [
                    .oneOf(O.notes.helped("new notes"), F.noNotes), .oneOf(O.due.helped("a new due date"), F.noDue),
                    .oneOf(O.priority.helped("a new priority, 0 to 3 or none, low, medium, high"), F.noPriority),
                    .oneOf(O.list.helped("move it to this list"), F.noList), .optional(O.meta.helped("set a metadata entry")), .optional(O.unsetMeta),
                    .oneOf(O.recur.helped("make it repeat (as for add)"), F.noRecur),
                ] + planningOptions(editing: true) + optional(F.json),
                summary: "change fields; each is its own LWW register")],
            details: [dateForms + " " + priorities, planning]
        ) { try $0.edit() },
        Command(
            name: "tag", forms: [.init("tag ID +T… -T…", optional(F.json), summary: "add / remove tags (a concurrent add wins)")],
            dashArgumentsArePositional: true, details: ["Example: tasklog tag a5d9 +shop -later"]
        ) { try $0.tag() },
        Command(
            name: "done", forms: [.init("done ID…", optional(F.force, F.json), summary: "mark done")],
            details: ["A task with open subtasks: on a terminal, done asks first; otherwise it refuses and writes nothing unless --force is given (with --json it prints {\"openChildren\":[…]})."]
        ) { try $0.setDone(true) },
        Command(name: "start", forms: [.init("start ID…", optional(F.json), summary: "mark in progress as of now")]) { try $0.setStarted(true) },
        Command(name: "stop", forms: [.init("stop ID…", optional(F.json), summary: "mark no longer in progress")]) { try $0.setStarted(false) },
        Command(name: "reopen", forms: [.init("reopen ID…", optional(F.json), summary: "mark open again")]) { try $0.setDone(false) },
        Command(name: "rm", forms: [.init("rm ID…", optional(F.json), summary: "delete")]) { try $0.remove() },
        Command(name: "restore", forms: [.init("restore ID…", optional(F.json), summary: "bring back (with edits made meanwhile); list --deleted shows them")]) {
            try $0.restore()
        },
        Command(
            name: "undo", forms: [.init("undo", optional(F.json), summary: "revert this device's last command that changed tasks; again for the one before")],
            details: ["Undo writes new operations, so it syncs like any edit. A field another device changed since is left as it is, and named."]
        ) { try $0.undo() },
        Command(name: "top", forms: [.init("top [N]", optional(F.json), summary: "the N (default 2) most urgent open tasks, by urgency")], details: [urgency]) {
            try $0.top()
        },
        Command(
            name: "today",
            forms: [.init("today [N]", optional(F.json), summary: "open tasks overdue, due today, scheduled, in progress; then the N (default 5) most urgent others")],
            details: ["A task shows in the first section that holds it. Waiting tasks are left out. " + urgency]
        ) { try $0.today() },
    ]

    /// What `tasklog help` prints.
    static var help: String {
        """
        tasklog: a task list kept as a per-device operation log that syncs without a server.

        usage: tasklog [--store DIR] COMMAND [OPTIONS]

        commands:
        \(all.flatMap(\.forms).map { "  " + $0.usage }.joined(separator: "\n"))

        Run 'tasklog help COMMAND' (or 'tasklog COMMAND --help') for what a command's options do.
        The store is --store DIR, else $TASKLOG_STORE, else $XDG_DATA_HOME/tasklog, else
        ~/.local/share/tasklog. IDs may be given as any unique prefix of 4 or more characters.
        Exit status: 0 success, 2 usage error, 1 any other failure.
        """
    }

    /// The README's command table: a row per form, in Markdown.
    package static var markdownTable: String {
        let rows = all.flatMap(\.forms).map { form in
            "| `\(String(form.usage.flatMap { $0 == "|" ? ["\\", "|"] : [$0] }))` | \(form.summary) |"
        }
        return (["| command | does |", "|---|---|"] + rows).joined(separator: "\n")
    }
}
