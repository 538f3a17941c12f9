/// The commands about the store, its logs, and syncing it with other devices.
extension Commands {
    private typealias O = Options
    private typealias F = Flags

    static let storeCommands: [Command] = [
        Command(
            name: "status", forms: [.init("status", optional(F.json.helped("print JSON")), summary: "replica, version vector, ops, tasks, bytes, segments")]
        ) { try $0.status() },
        Command(
            name: "log", forms: [.init("log", optional(O.replica, F.json.helped("one JSON object per line")), summary: "the operations, oldest first")]
        ) { try $0.log() },
        Command(
            name: "replay",
            forms: [
                .init("replay", optional(F.verify, F.json), summary: "rebuild the state from the logs alone; --verify fails if the saved state differs"),
                .init(
                    "replay", [.required(O.from), .optional(O.until), .optional(F.json)],
                    summary: "the state any folder of logs describes (another store, a shared folder, logs attached to a bug report), as it was then; the local store is not touched"),
            ]
        ) { try $0.replay() },
        Command(
            name: "history",
            forms: [.init(
                "history ID", optional(O.from.helped("read this folder of logs instead"), F.json.helped("print JSON")),
                summary: "every operation that touched a task, and which write is the current value of each field")]
        ) { try $0.history() },
        Command(name: "compact", forms: [.init("compact", summary: "seal and merge segments, rebuild the snapshot from the logs")]) {
            try $0.compact()
        },
        Command(
            name: "export",
            forms: [.init(
                "export", optional(O.exportFormat),
                summary: "print every open and done task as a JSON array, an iCalendar file, todo.txt lines or Taskwarrior JSON")]
        ) { try $0.export() },
        Command(
            name: "import",
            forms: [.init(
                "import FILE|-", optional(O.importFormat),
                summary: "add or update the tasks of a JSON array, iCalendar file, todo.txt file or Taskwarrior export, in one commit; only changed fields are written")]
        ) { try $0.importTasks() },
    ]

    private static let token: UsagePart = .oneOf(O.token, O.tokenFile)

    static let syncCommands: [Command] = [
        Command(
            name: "sync",
            forms: [
                .init(
                    "sync DIR", optional(F.watch, O.interval, F.verbose, F.json.helped("print one JSON object per exchange: what moved and what changed in tasks")),
                    summary: "exchange log segments with a shared folder (App Group container, Dropbox, iCloud Drive, Syncthing, NFS); --watch keeps converging until interrupted"),
                .init(
                    "sync DIR", [.required(F.encrypt), .optional(O.passphraseFile)],
                    summary: "turn DIR into an end-to-end encrypted folder and sync; files there are sealed and signed, and later syncs need no passphrase"),
                .init(
                    "sync DIR", [.required(F.rekey), .optional(O.passphraseFile, shown: "NEW")],
                    summary: "start a new key epoch under a new passphrase; what is written after it needs the new passphrase"),
                .init(
                    "sync s3://BUCKET[/PREFIX]", optional(F.watch),
                    summary: "the same exchange through an S3 bucket (AWS, R2, B2, MinIO, SeaweedFS); keys and endpoint as the AWS tools read them"),
                .init(
                    "sync webdav://[USER@]HOST[:PORT]/PATH/", optional(F.watch, O.passwordFile),
                    summary: "the same exchange through a WebDAV folder (Nextcloud, ownCloud, Apache, rclone); webdavs:// for TLS"),
                .init(
                    "sync http://HOST:PORT", [.optional(F.watch), token, .optional(O.tlsCA)],
                    summary: "exchange with an HTTP peer in two round trips; --watch pulls as the peer's changes feed reports and pushes local changes as they land"),
                .init(
                    "sync caldav://[USER[:PASSWORD]@]HOST[:PORT]/PATH/", optional(F.watch, O.passwordFile),
                    summary: "exchange with a task collection on a CalDAV server: edits there arrive as field writes, local changes go out with If-Match"),
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
                .init("devices", optional(F.json.helped("print one JSON object")), summary: "the devices this store knows: name, operations held, when each last wrote"),
                .init(
                    "devices TARGET",
                    optional(
                        F.json, O.passwordFile.helped("the WebDAV password, its first line; also $TASKLOG_WEBDAV_PASSWORD or ~/.netrc"),
                        O.tlsCA.helped("trust the certificates in this file (webdavs://)")),
                    summary: "beside a shared folder (a path, s3:// or webdav://): what it holds of each device, what each side lacks, and why an edit has not arrived"),
            ],
            details: [
                "Each problem gets a line 'why: …' under its device: a file not imported and why, operations no file holds, a key epoch this store lacks, a fork.",
                "The folder is read as a sync reads it, and nothing is written to it. An encrypted folder is read with the keys this store remembers.",
            ]
        ) { try $0.devices() },
        Command(
            name: "rename", forms: [.init("rename NAME", summary: "name this device; the name syncs, and the newest one wins")],
            details: ["A name is at most 64 bytes of UTF-8, without control characters."]
        ) { try $0.rename() },
        Command(
            name: "completion", forms: [.init("completion bash|zsh|fish", summary: "print a shell completion script: commands, options, task ids with titles, tags and lists")],
            details: ["Example: eval \"$(tasklog completion bash)\" in ~/.bashrc; tasklog completion fish | source"]
        ) { try $0.completion() },
        Command(name: "watch", forms: [.init("watch", optional(F.json.helped("one JSON object per change")), summary: "print each change as it lands, whichever process or sync made it")]) {
            try $0.watch()
        },
        Command(
            name: "serve",
            forms: [.init(
                "serve", [.optional(O.bind), .optional(O.port), token, .optional(F.allowGuest), .together(O.tlsCert, O.tlsKey)],
                summary: "run the HTTP peer (default 127.0.0.1:4984): a web page at /, REST for tasks, a changes feed, replication, and a CalDAV server for task apps")],
            details: [
                "The token may also come from $TASKLOG_TOKEN.",
                "CalDAV clients (Thunderbird, DAVx5, todoman) use the root URL, any user name and the token as the password; each list is a task collection.",
            ]
        ) { context in
            guard let http = context.http else { return try HTTPTool.handOver() }
            return try http.serve(context)
        },
    ]
}
