#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CRDTCore
import TaskModel
import Synchronization
import TaskStore

/// Every command of the CLI contract, with the options it accepts.
enum Commands {
    static let specs: [String: CommandSpec] = {
        let list: [CommandSpec] = [
            CommandSpec(name: "init", usage: "init"),
            CommandSpec(
                name: "add", valued: ["notes", "due", "priority", "tag", "list", "meta"],
                repeatable: ["tag", "meta"], flags: ["json"],
                usage: "add TITLE [--notes T] [--due D] [--priority P] [--tag T]… [--list L] [--meta K=V]… [--json]"),
            CommandSpec(
                name: "list", valued: ["tag", "list", "sort", "limit"], flags: ["all", "done", "json"],
                usage: "list [--all|--done] [--tag T] [--list L] [--sort created|priority|due|title] [--limit N] [--json]"),
            CommandSpec(name: "show", flags: ["json"], usage: "show ID [--json]"),
            CommandSpec(
                name: "edit", valued: ["title", "notes", "due", "priority", "list", "meta", "unset-meta"],
                repeatable: ["meta", "unset-meta"], flags: ["no-notes", "no-due", "no-priority", "no-list", "json"],
                usage: "edit ID [--title T] [--notes T|--no-notes] [--due D|--no-due] [--priority P|--no-priority] [--list L|--no-list] [--meta K=V]… [--unset-meta K]…"),
            CommandSpec(name: "tag", dashArgumentsArePositional: true, usage: "tag ID +TAG… -TAG…"),
            CommandSpec(name: "done", usage: "done ID…"),
            CommandSpec(name: "reopen", usage: "reopen ID…"),
            CommandSpec(name: "rm", usage: "rm ID…"),
            CommandSpec(name: "restore", usage: "restore ID"),
            CommandSpec(name: "top", flags: ["json"], usage: "top [N] [--json]"),
            CommandSpec(name: "status", flags: ["json"], usage: "status [--json]"),
            CommandSpec(name: "log", valued: ["replica"], flags: ["json"], usage: "log [--replica R] [--json]"),
            CommandSpec(name: "replay", valued: ["from", "until"], flags: ["verify", "json"], usage: "replay [--verify] [--from DIR] [--until TIME|REPLICA:SEQ] [--json]"),
            CommandSpec(name: "history", valued: ["from"], flags: ["json"], usage: "history ID [--from DIR] [--json]"),
            CommandSpec(name: "compact", usage: "compact"),
            CommandSpec(name: "export", valued: ["format"], usage: "export [--format json]"),
            CommandSpec(name: "import", valued: ["format"], usage: "import FILE|- [--format json]"),
            CommandSpec(name: "sync", valued: ["interval", "token", "token-file", "tls-ca"], flags: ["watch"], usage: "sync TARGET [--watch] [--interval SECONDS] [--token T | --token-file F] [--tls-ca PEM]   (TARGET: a shared folder or http(s)://host:port)"),
            CommandSpec(name: "serve", valued: ["bind", "port", "token", "token-file", "tls-cert", "tls-key"], flags: ["allow-guest"], usage: "serve [--bind ADDR] [--port P] [--token T | --token-file F] [--allow-guest] [--tls-cert F --tls-key F]"),
            CommandSpec(name: "watch", flags: ["json"], usage: "watch [--json]"),
        ]
        return Dictionary(uniqueKeysWithValues: list.map { ($0.name, $0) })
    }()

    static let order = [
        "init", "add", "list", "show", "edit", "tag", "done", "reopen", "rm", "restore", "top", "status",
        "log", "replay", "history", "compact", "export", "import", "sync", "serve", "watch",
    ]

    static var help: String {
        """
        tasklog: a task list kept as a per-device operation log that syncs without a server.

        usage: tasklog [--store DIR] COMMAND [OPTIONS]

        commands:
        \(order.map { "  " + specs[$0]!.usage }.joined(separator: "\n"))

        The store is --store DIR, else $TASKLOG_STORE, else $XDG_DATA_HOME/tasklog, else
        ~/.local/share/tasklog. IDs may be given as any unique prefix of 4 or more characters.
        Exit status: 0 success, 2 usage error, 1 any other failure.
        """
    }

    // MARK: Running

    static func run(_ name: String, _ a: ParsedArguments, storePath: String, http: (any HTTPCommands)?) throws -> Int32 {
        let context = Context(storePath: storePath, arguments: a, http: http)
        switch name {
        case "init": return try context.initialise()
        case "add": return try context.add()
        case "list": return try context.list()
        case "show": return try context.show()
        case "edit": return try context.edit()
        case "tag": return try context.tag()
        case "done", "reopen": return try context.setDone(name == "done")
        case "rm": return try context.remove()
        case "restore": return try context.restore()
        case "top": return try context.top()
        case "status": return try context.status()
        case "log": return try context.log()
        case "replay": return try context.replay()
        case "history": return try context.history()
        case "compact": return try context.compact()
        case "export": return try context.export()
        case "import": return try context.importTasks()
        case "sync": return try context.sync()
        case "watch": return try context.watch()
        case "serve":
            guard let http else { return try HTTPTool.handOver() }
            return try http.serve(context)
        default:
            throw CommandFailure(message: "'\(name)' is not available in this version of tasklog yet")
        }
    }
}

/// A failure that is not a usage error: exit status 1.
public struct CommandFailure: Error {
    public var message: String
    public init(message: String) { self.message = message }
}

/// What one command runs with: the store folder, its parsed arguments, and the HTTP
/// commands when this executable has them.
/// Stores a command hands over to process exit (see ``Context/keepUntilExit(_:)``).
private let storesKeptUntilExit = Mutex<[TaskStore]>([])

public struct Context: Sendable {
    public let storePath: String
    public let arguments: ParsedArguments
    let http: (any HTTPCommands)?

    var json: Bool { arguments.has("json") }

    /// How the CLI opens stores: a command's process may exit right after its commit, so
    /// seals happen in the commit rather than on a background thread, and the lock is released
    /// at once (a lease would only start a timer thread). The process is idle as soon as its
    /// command ends, so it seals at the idle threshold, as a long-running store does when a
    /// burst ends: the next commands read a short tail, not the whole of a large import.
    static var storeOptions: TaskStore.Options {
        var options = TaskStore.Options()
        options.sealsInBackground = false
        options.lockLease = .zero
        options.sealThreshold = options.idleSealThreshold
        return options
    }

    /// Opens the store for writing, creating it on first write. The store lives until the
    /// process exits (``keepUntilExit(_:)``).
    public func writableStore() throws -> TaskStore {
        let store = try TaskStore.open(at: storePath, create: true, options: Self.storeOptions)
        keepUntilExit(store)
        return store
    }

    /// Opens the store for a long-running command (`serve`) with the library's defaults:
    /// seals and merges run on a background thread and a burst of writes takes the lock once.
    /// The command brings the store to rest (``TaskStore/waitForMaintenance()``) before it exits.
    public func longRunningStore() throws -> TaskStore { try TaskStore.open(at: storePath, create: true) }

    /// Keeps `store` alive until the process exits. Its memory then goes back with the process
    /// in one step, which for a large state is much cheaper than releasing it object by object
    /// (a `list` of 10,000 tasks spent 6% of its time tearing the state down, a `done` 5%).
    /// The CLI's stores keep no lease, so the lock is not held meanwhile.
    private func keepUntilExit(_ store: TaskStore) { storesKeptUntilExit.withLock { $0.append(store) } }

    /// Opens the store for reading; nil if it does not exist yet (reads then see no tasks).
    /// The store lives until the process exits (``keepUntilExit(_:)``).
    func readableStore() throws -> TaskStore? {
        do {
            let store = try TaskStore.open(at: storePath, create: false, options: Self.storeOptions)
            keepUntilExit(store)
            return store
        } catch StoreError.storeNotFound(_) {
            return nil
        }
    }

    public func positionals(_ range: ClosedRange<Int>, _ what: String) throws(UsageError) -> [String] {
        let p = arguments.positionals
        guard range.contains(p.count) else {
            throw UsageError(message: p.count < range.lowerBound ? "missing \(what)" : "unexpected argument '\(p[range.upperBound])'")
        }
        return p
    }

    func ids(_ store: TaskStore, includeDeleted: Bool = false) throws -> [TaskID] {
        let p = try positionals(1...Int.max, "task ID")
        return try p.map { text in
            do {
                return try store.resolve(text, includeDeleted: includeDeleted)
            } catch StoreError.taskNotFound(_) where !includeDeleted {
                if let deleted = try? store.resolve(text, includeDeleted: true) {
                    throw CommandFailure(message: "task \(deleted) was deleted; run 'tasklog restore \(deleted)' to bring it back")
                }
                throw StoreError.taskNotFound(text)
            }
        }
    }

    /// Hands the tasks the positionals name to `lean`, a store call that reads only the tasks
    /// it is given and returns false when one of them is not live: first the ids as typed, when
    /// all are whole ids (the usual case: nothing is resolved), else as resolved (resolving
    /// says what is wrong with one). Returns the resolved ids when `lean` turned them down too,
    /// for the call that loads the state; nil when `lean` did the work.
    func leanly(_ store: TaskStore, _ lean: ([TaskID]) throws -> Bool) throws -> [TaskID]? {
        let whole = try positionals(1...Int.max, "task ID").compactMap(TaskID.init)
        if whole.count == arguments.positionals.count, try lean(whole) { return nil }
        let list = try ids(store)
        return try lean(list) ? nil : list
    }

    public func report(_ store: TaskStore) {
        for w in store.warnings { Output.warning(w.description) }
    }

    /// Prints the store's warnings not in `noted` (for commands that run until stopped).
    public func reportNew(_ store: TaskStore, noted: inout Set<String>) {
        for w in store.warnings where noted.insert(w.description).inserted { Output.warning(w.description) }
    }

    // MARK: Commands

    func initialise() throws -> Int32 {
        _ = try positionals(0...0, "")
        let store = try writableStore()
        Output.line(store.replica.hex)
        return 0
    }

    func add() throws -> Int32 {
        let words = try positionals(1...Int.max, "TITLE")
        let title = words.joined(separator: " ")
        guard !title.isEmpty else { throw UsageError(message: "the title must not be empty") }
        let task = NewTask(
            title: title, notes: arguments.value("notes"), priority: try priority(), due: try due(),
            list: arguments.value("list"), tags: try tags(arguments.all("tag")), meta: try meta())
        let store = try writableStore()
        let item = try store.add(task)
        if json { Output.json(item) } else { Output.line(item.id.rawValue) }
        return 0
    }

    func list() throws -> Int32 {
        _ = try positionals(0...0, "")
        if arguments.has("all") && arguments.has("done") { throw UsageError(message: "--all and --done exclude each other") }
        guard let sort = TaskQuery.SortKey(rawValue: arguments.value("sort") ?? "created") else {
            throw UsageError(message: "--sort must be created, priority, due or title")
        }
        var limit: Int?
        if let l = arguments.value("limit") {
            guard let n = Int(l), n >= 0 else { throw UsageError(message: "--limit must be a whole number ≥ 0") }
            limit = n
        }
        let query = TaskQuery(
            status: arguments.has("all") ? .all : arguments.has("done") ? .done : .open,
            tag: arguments.value("tag"), list: arguments.value("list"), sort: sort, limit: limit)
        guard let store = try readableStore() else {
            printTasks([])
            return 0
        }
        if json {
            // Written as the tasks come, in pieces: a long list never sits whole in memory.
            var w = JSONTaskArrayWriter()
            try store.scanTasks(query, into: &w)
            report(store)
            w.finish()
        } else {
            let tasks = try store.tasks(query)
            report(store)
            printTasks(tasks)
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
        if json { Output.json(task) } else { Output.line(Render.detail(task)) }
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
        guard !writes.isEmpty else { throw UsageError(message: "nothing to change; give at least one of --title, --notes, --due, --priority, --list, --meta") }
        let store = try writableStore()
        var id: TaskID?
        if let list = try leanly(store, { ids in
            id = ids[0]
            return try store.editIfLive(ids[0], writes)
        }) {
            try store.edit(list[0], writes)
        }
        if json, let id, let t = try store.liveTasks([id])[id] { Output.json(t) }
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
        try store.tag(id, add: add, remove: remove)
        return 0
    }

    private var p1Missing: String { arguments.positionals.isEmpty ? "task ID" : "+TAG or -TAG" }

    func setDone(_ done: Bool) throws -> Int32 {
        let store = try writableStore()
        guard let list = try leanly(store, { try done ? store.completeIfLive($0) : store.reopenIfLive($0) }) else { return 0 }
        if done { try store.complete(list) } else { try store.reopen(list) }
        return 0
    }

    func remove() throws -> Int32 {
        let store = try writableStore()
        if let list = try leanly(store, store.removeIfLive) { try store.remove(list) }
        return 0
    }

    func restore() throws -> Int32 {
        _ = try positionals(1...1, "task ID")
        let store = try writableStore()
        try store.restore(try ids(store, includeDeleted: true)[0])
        return 0
    }

    func top() throws -> Int32 {
        let p = try positionals(0...1, "")
        var n = 2
        if let first = p.first {
            guard let v = Int(first), v >= 0 else { throw UsageError(message: "N must be a whole number ≥ 0, got '\(first)'") }
            n = v
        }
        let tasks = try readableStore().map { try $0.top(n) } ?? []
        printTasks(tasks)
        return 0
    }

    func status() throws -> Int32 {
        _ = try positionals(0...0, "")
        guard let store = try readableStore() else { throw StoreError.storeNotFound(path: storePath) }
        let s = try store.status()
        if json {
            var w = JSONWriter()
            w.raw("{\"replica\":")
            w.string(s.replica.hex)
            w.raw(",\"versionVector\":{")
            for (i, e) in s.version.sortedEntries.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(e.replica.hex)
                w.raw(":")
                w.number(e.seq)
            }
            w.raw("},\"ops\":")
            w.number(s.operations)
            w.raw(",\"tasks\":")
            w.number(Int64(s.tasks))
            w.raw(",\"bytes\":")
            w.number(Int64(s.bytes))
            w.raw(",\"segments\":")
            w.number(Int64(s.segments))
            w.raw(",\"store\":")
            w.string(storePath)
            w.raw("}\n")
            Output.bytes(w.bytes)
        } else {
            Output.line("store     \(storePath)")
            Output.line("replica   \(s.replica.hex)")
            Output.line("tasks     \(s.tasks)")
            Output.line("ops       \(s.operations)")
            Output.line("segments  \(s.segments)")
            Output.line("bytes     \(s.bytes)")
            for e in s.version.sortedEntries {
                Output.line("version   \(e.replica.hex) \(e.seq)\(e.replica == s.replica ? " (this replica)" : "")")
            }
        }
        report(store)
        return 0
    }

    func log() throws -> Int32 {
        _ = try positionals(0...0, "")
        guard let store = try readableStore() else { return 0 }
        let filter = arguments.value("replica")
        var text = ""
        for (replica, commit) in try store.history() {
            if let f = filter, !replica.hex.hasPrefix(f.lowercased()) { continue }
            for (i, op) in commit.operations.enumerated() {
                text += Render.operation(op, replica: replica, seq: commit.firstSeq + UInt64(i), time: commit.time, json: json)
                text += "\n"
            }
            if text.utf8.count > 1 << 16 {
                Output.out(text)
                text = ""
            }
        }
        Output.out(text)
        report(store)
        return 0
    }

    func replay() throws -> Int32 {
        _ = try positionals(0...0, "")
        if arguments.value("from") != nil || arguments.value("until") != nil {
            guard !arguments.has("verify") else { throw UsageError(message: "--verify checks the store's own saved state; it does not combine with --from or --until") }
            return try replayLogs()
        }
        guard let store = try readableStore() else { throw StoreError.storeNotFound(path: storePath) }
        let (state, warnings) = try store.replay()
        for w in warnings { Output.warning(w.description) }
        if arguments.has("verify") {
            let verified = try store.verify()
            guard warnings.isEmpty else {
                throw CommandFailure(message: "the logs have damaged or foreign files (see the warnings above); the saved state was checked against what is readable")
            }
            if json {
                var w = JSONWriter()
                w.raw("{\"verified\":true,\"ops\":")
                w.number(verified.operations)
                w.raw(",\"savedOps\":")
                if let saved = verified.saved { w.number(saved) } else { w.raw("null") }
                w.raw("}\n")
                Output.bytes(w.bytes)
            } else if let saved = verified.saved {
                Output.line("verified: the saved state, brought up to date from the logs, matches them (\(verified.operations) operations, \(saved) of them saved)")
            } else {
                Output.line("no saved state yet; the logs replay cleanly (\(verified.operations) operations)")
            }
            return 0
        }
        if json {
            var w = JSONWriter()
            w.taskArray(TaskQuery(status: .all).apply(to: state.liveTasks))
            w.raw("\n")
            Output.bytes(w.bytes)
        } else {
            let live = state.liveCount
            Output.line("replayed \(state.version.operationCount) operations from \(state.version.entries.count) replica(s): \(live) task(s), \(state.allTasks.count - live) deleted")
        }
        return 0
    }

    func compact() throws -> Int32 {
        _ = try positionals(0...0, "")
        guard let store = try readableStore() else { throw StoreError.storeNotFound(path: storePath) }
        for w in try store.compact() { Output.warning(w.description) }
        let s = try store.status()
        Output.line("compacted: \(s.operations) operations in \(s.segments) segment file(s), \(s.bytes) bytes")
        report(store)
        return 0
    }

    func format() throws(UsageError) {
        let f = arguments.value("format") ?? "json"
        guard f == "json" else {
            if f == "ics" || f == "todotxt" { throw UsageError(message: "--format \(f) is not supported yet; use json") }
            throw UsageError(message: "--format must be json")
        }
    }

    func export() throws -> Int32 {
        _ = try positionals(0...0, "")
        try format()
        let tasks = try readableStore().map { try $0.tasks(TaskQuery(status: .all)) } ?? []
        var w = JSONWriter()
        w.taskArray(tasks)
        w.raw("\n")
        Output.bytes(w.bytes)
        return 0
    }

    func importTasks() throws -> Int32 {
        let file = try positionals(1...1, "FILE")[0]
        try format()
        let bytes = try readInput(file)
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw CommandFailure(message: "\(file): \(error); nothing was imported")
        }
        guard case .array(let items) = value else {
            throw CommandFailure(message: "\(file): expected a JSON array of tasks; nothing was imported")
        }
        var patches: [TaskPatch] = []
        for (i, item) in items.enumerated() {
            do {
                patches.append(try TaskPatch(json: item))
            } catch {
                throw CommandFailure(message: "\(file): task \(i + 1): \(error); nothing was imported")
            }
        }
        let store = try writableStore()
        let result: (ids: [TaskID], created: Int)
        do {
            result = try store.apply(patches)
        } catch StoreError.invalidArgument(let why) {
            throw CommandFailure(message: "\(file): \(why); nothing was imported")
        }
        Output.line("imported \(result.ids.count) task(s): \(result.created) created, \(result.ids.count - result.created) updated")
        return 0
    }

    // MARK: Values

    func priority() throws(UsageError) -> UInt8? {
        guard let p = arguments.value("priority") else { return nil }
        guard let v = UInt8(p), v <= 3 else { throw UsageError(message: "--priority must be 0, 1, 2 or 3 (3 most urgent), got '\(p)'") }
        return v
    }

    func due() throws(UsageError) -> Due? {
        guard let d = arguments.value("due") else { return nil }
        guard let v = Due(parsing: d) else {
            throw UsageError(message: "--due must be YYYY-MM-DD or an ISO-8601 instant such as 2026-12-01T09:00:00Z, got '\(d)'")
        }
        return v
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

    public func readInput(_ path: String) throws -> [UInt8] {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandFailure(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CommandFailure(message: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { return out }
            out += chunk[0..<n]
        }
    }
}
