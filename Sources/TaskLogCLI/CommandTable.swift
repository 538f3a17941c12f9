/// Every command of the CLI contract, in the order help and the README list them.
package enum Commands {
    static let all: [Command] = taskCommands + storeCommands + syncCommands

    static func named(_ name: String) -> Command? { all.first { $0.name == name } }

    private static let json = OptionSpec.flag("json", "print JSON (the task form) instead of text")
    private static let dateForms = "Dates, in local time: today, tomorrow, yesterday, a weekday (the next one; also next tue), next week (Monday), eow, eom, +3d, +2w, +1m, +1y, in 3 days, 12-24, 12/24 (day first in day-first locales such as en_GB), 2026-12-24 (a day, no time zone); any of these then a time such as 9:00, 17:30, 9am, 5:30pm or noon, 2026-12-24T09:00 (a local time); or an ISO-8601 instant such as 2026-12-24T09:00:00Z."
    private static let recurrence = "Recurring: completing a task with --recur makes its next occurrence, due one interval after its due date (or after today), once on every device."
    private static let quickAdd = "Quick add: #tag, +list, !0 to !3 or !high, due:D, wait:D, sched:D anywhere; a date and a rule such as every week or daily at the end. \\word or \"quoted words\" stay in the title. Quote TEXT with single quotes in a shell. Example: tasklog add -q 'Buy milk tomorrow #shop +groceries !2 every week'"
    private static let urgency = "Urgency: overdue tasks first, then due soon and priority weigh in (a task due today stays above one due in four weeks whatever its priority); in progress and scheduled add to it; blocked tasks come last (Spec/cli.md, Urgency)."
    private static let priorities = "Priorities: 0 to 3, 3 the most urgent, or by name: none 0, low 1, medium 2, high 3; a task without one has no priority."

    private static let planning = "Subtasks: --parent puts a task under another; list indents it there and shows 2/5 done on the parent. --depends names tasks it waits for: it is blocked while one is open. --wait hides it from list and top until that date; --scheduled plans it for one."

    /// The subtask, dependency and date options of add (`editing`: and their removals, for edit).
    private static func planningOptions(editing: Bool) -> [OptionSpec] {
        let set: [OptionSpec] = [
            .valued("parent", "ID", "make it a subtask of this task"),
            .valued("depends", "ID", repeats: true, "a task it waits for (or several, comma-separated); repeat for more"),
            .valued("wait", "D", "hide it from list and top until D"), .valued("scheduled", "D", "when it is planned for"),
        ]
        guard editing else { return set }
        return set + [
            .flag("no-parent", "move it to the top level"), .valued("no-depends", "ID", repeats: true, "stop waiting for this task"),
            .flag("no-wait", "show it again"), .flag("no-scheduled", "remove the planned date"),
            .flag("start", "mark it in progress as of now"), .flag("stop", "mark it no longer in progress"),
        ]
    }

    private static let taskCommands: [Command] = [
        Command(
            name: "init", forms: [.init(usage: "init [--name NAME]", summary: "create the store; print the replica id")],
            options: [.valued("name", "NAME", "name this device; every device that syncs shows it")]
        ) { try $0.initialise() },
        Command(
            name: "add",
            forms: [.init(
                usage: "add TITLE [--notes T] [--due D] [--priority P] [--tag T]… [--list L] [--meta K=V]… [--recur R] [--parent ID] [--depends ID]… [--wait D] [--scheduled D] [--json]",
                summary: "add a task; print only its id (with --json, the task)"),
                .init(usage: "add -q|--quick TEXT [--notes T] [--meta K=V]… [--parent ID] [--depends ID]… [--json]", summary: "add the task TEXT states: Buy milk tomorrow #shop +groceries !2 every week"),
            ],
            options: [
                .flag("quick", short: "q", "read the title, due, #tags, +list, !priority and rule from TEXT (Spec/cli.md, Quick add)"),
                .valued("notes", "T", "free text kept with the task"), .valued("due", "D", "when it is due"),
                .valued("priority", "P", "0 to 3, 3 most urgent, or none, low, medium, high"), .valued("tag", "T", repeats: true, "a tag"),
                .valued("list", "L", "the list it belongs to"), .valued("meta", "K=V", repeats: true, "a metadata entry"),
                .valued("recur", "R", "repeat it: daily, weekly, monthly, yearly or every N days|weeks|months|years"), json,
            ] + planningOptions(editing: false),
            details: [
                dateForms + " " + priorities, recurrence, planning,
                "Example: tasklog add Buy milk --due 2026-12-24 --priority 2 --tag shop",
                quickAdd,
            ]
        ) { try $0.add() },
        Command(
            name: "list",
            forms: [.init(
                usage: "list [WORD…] [--all|--done|--deleted|--waiting] [--tag T]… [--list L]… [--overdue] [--due-before D] [--due-after D] [--sort created|priority|due|title] [--limit N] [--json]",
                summary: "open tasks by default, subtasks under their parents, or those whose title or notes hold every WORD; overdue, due-today, blocked and started tasks are marked")],
            options: [
                .flag("all", "open and done tasks, waiting ones too"), .flag("done", "done tasks only"), .flag("deleted", "deleted tasks, to restore"),
                .flag("waiting", "only tasks hidden until their wait date"),
                .valued("tag", "T", repeats: true, "only tasks with this tag (any case); repeat for several"),
                .valued("list", "L", repeats: true, "only tasks in this list"), .flag("overdue", "only tasks whose due date or time has passed"),
                .valued("due-before", "D", "only tasks due before the date D"), .valued("due-after", "D", "only tasks due after the date D"),
                .valued("sort", "KEY", "created (default), priority, due or title"),
                .valued("limit", "N", "at most N tasks"), json,
            ],
            details: [
                "Words match title and notes ignoring case and accents: 'cafe' finds 'Café'.", dateForms,
                "STATE says started, blocked (a dependency is open), waiting, or 2/5 done on a task with subtasks.",
                "Example: tasklog list milk --tag shop --due-before friday",
            ]
        ) { try $0.list() },
        Command(
            name: "search",
            forms: [.init(usage: "search WORD… [--all|--done|--deleted] [--tag T]… [--list L]… [--json]", summary: "list the tasks whose title or notes hold every WORD")],
            options: [
                .flag("all", "open and done tasks"), .flag("done", "done tasks only"), .flag("deleted", "deleted tasks"),
                .valued("tag", "T", repeats: true, "only tasks with this tag"), .valued("list", "L", repeats: true, "only tasks in this list"), json,
            ],
            details: ["Words match ignoring case and accents. Example: tasklog search cafe"]
        ) { try $0.list() },
        Command(name: "show", forms: [.init(usage: "show ID [--json]", summary: "one task")], options: [json]) { try $0.show() },
        Command(
            name: "edit",
            forms: [.init(
                usage: "edit ID [--title T] [--notes T|--no-notes] [--due D|--no-due] [--priority P|--no-priority] [--list L|--no-list] [--meta K=V]… [--unset-meta K]… [--recur R|--no-recur] [--parent ID|--no-parent] [--depends ID]… [--no-depends ID]… [--wait D|--no-wait] [--scheduled D|--no-scheduled] [--start|--stop]",
                summary: "change fields; each is its own LWW register")],
            options: [
                .valued("title", "T", "a new title"), .valued("notes", "T", "new notes"), .flag("no-notes", "remove the notes"),
                .valued("due", "D", "a new due date"), .flag("no-due", "remove the due date"),
                .valued("priority", "P", "a new priority, 0 to 3 or none, low, medium, high"), .flag("no-priority", "remove the priority"),
                .valued("list", "L", "move it to this list"), .flag("no-list", "take it out of its list"),
                .valued("meta", "K=V", repeats: true, "set a metadata entry"), .valued("unset-meta", "K", repeats: true, "remove a metadata entry"),
                .valued("recur", "R", "make it repeat (as for add)"), .flag("no-recur", "stop it repeating"), json,
            ] + planningOptions(editing: true),
            details: [dateForms + " " + priorities, planning]
        ) { try $0.edit() },
        Command(
            name: "tag", forms: [.init(usage: "tag ID +T… -T… [--json]", summary: "add / remove tags (a concurrent add wins)")], options: [json],
            dashArgumentsArePositional: true, details: ["Example: tasklog tag a5d9 +shop -later"]
        ) { try $0.tag() },
        Command(
            name: "done", forms: [.init(usage: "done ID… [--force] [--json]", summary: "mark done")],
            options: [.flag("force", "mark a task with open subtasks done without asking"), json],
            details: ["A task with open subtasks: on a terminal, done asks first; otherwise it refuses and writes nothing unless --force is given (with --json it prints {\"openChildren\":[…]})."]
        ) { try $0.setDone(true) },
        Command(name: "start", forms: [.init(usage: "start ID… [--json]", summary: "mark in progress as of now")], options: [json]) { try $0.setStarted(true) },
        Command(name: "stop", forms: [.init(usage: "stop ID… [--json]", summary: "mark no longer in progress")], options: [json]) { try $0.setStarted(false) },
        Command(name: "reopen", forms: [.init(usage: "reopen ID… [--json]", summary: "mark open again")], options: [json]) { try $0.setDone(false) },
        Command(name: "rm", forms: [.init(usage: "rm ID… [--json]", summary: "delete")], options: [json]) { try $0.remove() },
        Command(name: "restore", forms: [.init(usage: "restore ID… [--json]", summary: "bring back (with edits made meanwhile); list --deleted shows them")], options: [json]) { try $0.restore() },
        Command(
            name: "undo", forms: [.init(usage: "undo [--json]", summary: "revert this device's last command that changed tasks; again for the one before")],
            options: [json],
            details: ["Undo writes new operations, so it syncs like any edit. A field another device changed since is left as it is, and named."]
        ) { try $0.undo() },
        Command(
            name: "top", forms: [.init(usage: "top [N] [--json]", summary: "the N (default 2) most urgent open tasks, by urgency")],
            options: [json], details: [urgency]
        ) { try $0.top() },
        Command(
            name: "today",
            forms: [.init(usage: "today [N] [--json]", summary: "open tasks overdue, due today, scheduled, in progress; then the N (default 5) most urgent others")],
            options: [json],
            details: ["A task shows in the first section that holds it. Waiting tasks are left out. " + urgency]
        ) { try $0.today() },
    ]

    private static let storeCommands: [Command] = [
        Command(
            name: "status", forms: [.init(usage: "status [--json]", summary: "replica, version vector, ops, tasks, bytes, segments")],
            options: [.flag("json", "print JSON")]
        ) { try $0.status() },
        Command(
            name: "log", forms: [.init(usage: "log [--replica R] [--json]", summary: "the operations, oldest first")],
            options: [.valued("replica", "R", "only this replica's (a prefix of its id)"), .flag("json", "one JSON object per line")]
        ) { try $0.log() },
        Command(
            name: "replay",
            forms: [
                .init(usage: "replay [--verify] [--json]", summary: "rebuild the state from the logs alone; --verify fails if the saved state differs"),
                .init(
                    usage: "replay --from DIR [--until TIME|REPLICA:SEQ] [--json]",
                    summary: "the state any folder of logs describes (another store, a shared folder, logs attached to a bug report), as it was then; the local store is not touched"),
            ],
            options: [
                .flag("verify", "check the saved state against the logs"), .valued("from", "DIR", "replay this folder of logs instead"),
                .valued("until", "TIME|REPLICA:SEQ", "stop at this time or operation"), json,
            ]
        ) { try $0.replay() },
        Command(
            name: "history",
            forms: [.init(usage: "history ID [--from DIR] [--json]", summary: "every operation that touched a task, and which write is the current value of each field")],
            options: [.valued("from", "DIR", "read this folder of logs instead"), .flag("json", "print JSON")]
        ) { try $0.history() },
        Command(name: "compact", forms: [.init(usage: "compact", summary: "seal and merge segments, rebuild the snapshot from the logs")]) {
            try $0.compact()
        },
        Command(
            name: "export", forms: [.init(usage: "export [--format json|ics|todotxt|taskwarrior]", summary: "print every open and done task as a JSON array, an iCalendar file, todo.txt lines or Taskwarrior JSON")],
            options: [.valued("format", "F", "json (the default), todotxt or taskwarrior")]
        ) { try $0.export() },
        Command(
            name: "import", forms: [.init(usage: "import FILE|- [--format json|ics|todotxt|taskwarrior]", summary: "add or update the tasks of a JSON array, iCalendar file, todo.txt file or Taskwarrior export, in one commit; only changed fields are written")],
            options: [.valued("format", "F", "json, todotxt or taskwarrior (guessed from a .txt name or the content)")]
        ) { try $0.importTasks() },
    ]

    private static let tokenOptions: [OptionSpec] = [
        .valued("token", "T", "the bearer token"), .valued("token-file", "F", "read the token from this file"),
    ]

    private static let syncCommands: [Command] = [
        Command(
            name: "sync",
            forms: [
                .init(
                    usage: "sync DIR [--watch] [--interval S] [--verbose] [--json]",
                    summary: "exchange log segments with a shared folder (App Group container, Dropbox, iCloud Drive, Syncthing, NFS); --watch keeps converging until interrupted"),
                .init(
                    usage: "sync DIR --encrypt [--passphrase-file F]",
                    summary: "turn DIR into an end-to-end encrypted folder and sync; files there are sealed and signed, and later syncs need no passphrase"),
                .init(
                    usage: "sync DIR --rekey [--passphrase-file NEW]",
                    summary: "start a new key epoch under a new passphrase; what is written after it needs the new passphrase"),
                .init(
                    usage: "sync s3://BUCKET[/PREFIX] [--watch]",
                    summary: "the same exchange through an S3 bucket (AWS, R2, B2, MinIO, SeaweedFS); keys and endpoint as the AWS tools read them"),
                .init(
                    usage: "sync webdav://[USER@]HOST[:PORT]/PATH/ [--watch] [--password-file F]",
                    summary: "the same exchange through a WebDAV folder (Nextcloud, ownCloud, Apache, rclone); webdavs:// for TLS"),
                .init(
                    usage: "sync http://HOST:PORT [--watch] [--token T | --token-file F] [--tls-ca PEM]",
                    summary: "exchange with an HTTP peer in two round trips; --watch pulls as the peer's changes feed reports and pushes local changes as they land"),
                .init(
                    usage: "sync caldav://[USER[:PASSWORD]@]HOST[:PORT]/PATH/ [--watch] [--password-file F]",
                    summary: "exchange with a task collection on a CalDAV server: edits there arrive as field writes, local changes go out with If-Match"),
            ],
            options: [
                .flag("watch", "keep syncing until interrupted"), .valued("interval", "S", "seconds between checks of a folder (default 1), an S3 or WebDAV folder (5) or a CalDAV server (30)"),
                .flag("verbose", "say both what changed in tasks and what moved (operations, bytes, files)"),
                .flag("json", "print one JSON object per exchange: what moved and what changed in tasks"),
            ] + tokenOptions + [
                .valued("tls-ca", "PEM", "trust the certificates in this file (https://)"),
                .valued("password-file", "F", "the CalDAV or WebDAV password, its first line; also $TASKLOG_CALDAV_PASSWORD, $TASKLOG_WEBDAV_PASSWORD or ~/.netrc"),
                .flag("encrypt", "encrypt the folder (a passphrase is needed)"), .flag("rekey", "start a new key epoch under a new passphrase"),
                .valued("passphrase-file", "F", "the encrypted folder's passphrase, its first line; also $TASKLOG_PASSPHRASE, else asked on the terminal"),
            ],
            details: [
                "On a terminal, sync says what changed in tasks: '3 tasks updated, 1 added; 1 edit of 'Buy milk' superseded by a later one from replica 3f2a9c1e'. Otherwise it says what moved, as it always has.",
                "The token may also come from $TASKLOG_TOKEN.",
                "A store remembers an encrypted folder's key (mode 0600), so only its first sync with the folder needs the passphrase.",
                "A caldav:// URL names one task collection on a CalDAV server (caldavs:// for TLS); it syncs as one more replica.",
                "s3:// reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL, ~/.aws/credentials and ~/.aws/config.",
                "An idle sync with an S3 or WebDAV folder costs one small request (Spec/sync-folder.md, 'Idle syncs').",
            ]
        ) { try $0.sync() },
        Command(
            name: "devices",
            forms: [
                .init(usage: "devices [--json]", summary: "the devices this store knows: name, operations held, when each last wrote"),
                .init(
                    usage: "devices TARGET [--json]",
                    summary: "beside a shared folder (a path, s3:// or webdav://): what it holds of each device, what each side lacks, and why an edit has not arrived"),
            ],
            options: [
                .flag("json", "print one JSON object"),
                .valued("password-file", "F", "the WebDAV password, its first line; also $TASKLOG_WEBDAV_PASSWORD or ~/.netrc"),
                .valued("tls-ca", "PEM", "trust the certificates in this file (webdavs://)"),
            ],
            details: [
                "Each problem gets a line 'why: …' under its device: a file not imported and why, operations no file holds, a key epoch this store lacks, a fork.",
                "The folder is read as a sync reads it, and nothing is written to it. An encrypted folder is read with the keys this store remembers.",
            ]
        ) { try $0.devices() },
        Command(
            name: "rename", forms: [.init(usage: "rename NAME", summary: "name this device; the name syncs, and the newest one wins")],
            details: ["A name is at most 64 bytes of UTF-8, without control characters."]
        ) { try $0.rename() },
        Command(
            name: "completion", forms: [.init(usage: "completion bash|zsh|fish", summary: "print a shell completion script: commands, options, task ids with titles, tags and lists")],
            details: ["Example: eval \"$(tasklog completion bash)\" in ~/.bashrc; tasklog completion fish | source"]
        ) { try $0.completion() },
        Command(
            name: "watch", forms: [.init(usage: "watch [--json]", summary: "print each change as it lands, whichever process or sync made it")],
            options: [.flag("json", "one JSON object per change")]
        ) { try $0.watch() },
        Command(
            name: "serve",
            forms: [.init(
                usage: "serve [--bind ADDR] [--port P] [--token T | --token-file F] [--allow-guest] [--tls-cert F --tls-key F]",
                summary: "run the HTTP peer (default 127.0.0.1:4984): a web page at /, REST for tasks, a changes feed, replication, and a CalDAV server for task apps")],
            options: [.valued("bind", "ADDR", "the address to listen on"), .valued("port", "P", "the port (0 picks a free one)")] + tokenOptions + [
                .flag("allow-guest", "serve without a token (loopback only)"), .valued("tls-cert", "F", "serve HTTPS with this PEM certificate"),
                .valued("tls-key", "F", "and this PEM key"),
            ],
            details: [
                "The token may also come from $TASKLOG_TOKEN.",
                "CalDAV clients (Thunderbird, DAVx5, todoman) use the root URL, any user name and the token as the password; each list is a task collection.",
            ]
        ) { context in
            guard let http = context.http else { return try HTTPTool.handOver() }
            return try http.serve(context)
        },
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
