@_spi(Engine) import TaskModel
import TaskPlanning

/// Every option that takes a value, declared once: its name, help and the reader that turns
/// what was typed into a value or refuses it. Commands list these in their usage lines and
/// read them through ``ParsedArguments/value(_:)``.
package enum Options {
    // Task fields (add and edit).
    static let title = Option.parsed("title", "T", "a new title", { $0.isEmpty ? nil : $0 }, refusal: { _ in "the title must not be empty" })
    static let notes = Option.text("notes", "T", "free text kept with the task")
    static let due = Option.date("due", "D", "when it is due")
    static let priority = Option.parsed("priority", "P", "0 to 3, 3 most urgent, or none, low, medium, high", priorityValue) {
        "--priority must be 0, 1, 2 or 3 (3 most urgent) or none, low, medium or high, got '\(DateInput.shown($0))'"
    }
    static let tag = Option.parsed("tag", "T", repeats: true, "a tag", { $0.isEmpty ? nil : $0 }, refusal: { _ in "a tag must not be empty" })
    static let list = Option.text("list", "L", "the list it belongs to")
    static let meta = Option.parsed("meta", "K=V", repeats: true, "a metadata entry", metaEntry) { "--meta takes KEY=VALUE, got '\($0)'" }
    static let unsetMeta = Option.text("unset-meta", "K", repeats: true, "remove a metadata entry")
    static let recur = Option.parsed("recur", "R", "repeat it: daily, weekly, monthly, yearly or every N days|weeks|months|years", RecurrenceRule.init) {
        "--recur takes daily, weekly, monthly, yearly or every N days|weeks|months|years, got '\($0)'"
    }

    // Subtasks, dependencies and planned dates (add and edit).
    static let parent = Option.text("parent", "ID", "make it a subtask of this task")
    static let depends = Option.text("depends", "ID", repeats: true, "a task it waits for (or several, comma-separated); repeat for more")
    static let noDepends = Option.text("no-depends", "ID", repeats: true, "stop waiting for this task")
    static let wait = Option.date("wait", "D", "hide it from list and top until D")
    static let scheduled = Option.date("scheduled", "D", "when it is planned for")

    // Listing.
    static let tagFilter = Option.text("tag", "T", repeats: true, "only tasks with this tag (any case); repeat for several")
    static let listFilter = Option.text("list", "L", repeats: true, "only tasks in this list")
    static let dueBefore = Option.date("due-before", "D", "only tasks due before the date D")
    static let dueAfter = Option.date("due-after", "D", "only tasks due after the date D")
    static let sort = Option<TaskQuery.SortKey>.choice("sort", "KEY", help: { "\($0) (created is the default)" }) { listed, _ in "--sort must be \(listed)" }
    static let limit = Option.parsed("limit", "N", "at most N tasks", { Int($0).flatMap { $0 >= 0 ? $0 : nil } }) { _ in "--limit must be a whole number ≥ 0" }

    // The store and its logs.
    static let name = Option.text("name", "NAME", "name this device; every device that syncs shows it")
    static let replica = Option.text("replica", "R", "only this replica's (a prefix of its id)")
    static let from = Option.text("from", "DIR", "replay this folder of logs instead")
    static let until = Option.text("until", "TIME|REPLICA:SEQ", "stop at this time or operation")
    static let exportFormat = Option<InterchangeFormat>.choice("format", "F", help: { "\($0); json is the default" }, refusal: formatRefusal)
    static let importFormat = Option<InterchangeFormat>.choice(
        "format", "F", help: { "\($0); else guessed from a .txt or .ics name, or from the content" }, refusal: formatRefusal)

    // Syncing and serving.
    package static let interval = Option.parsed(
        "interval", "S", "seconds between checks of a folder (default 1), an S3 or WebDAV folder (5) or a CalDAV server (30)",
        { Double($0).flatMap { (0.05...86_400).contains($0) ? $0 : nil } }
    ) { "--interval must be a number of seconds between 0.05 and 86400, got '\($0)'" }
    package static let token = Option.text("token", "T", "the bearer token")
    package static let tokenFile = Option.text("token-file", "F", "read the token from this file")
    package static let tlsCA = Option.text("tls-ca", "PEM", "trust the certificates in this file (https://)")
    package static let passwordFile = Option.text(
        "password-file", "F", "the CalDAV or WebDAV password, its first line; also $TASKLOG_CALDAV_PASSWORD, $TASKLOG_WEBDAV_PASSWORD or ~/.netrc")
    static let passphraseFile = Option.text(
        "passphrase-file", "F", "the encrypted folder's passphrase, its first line; also $TASKLOG_PASSPHRASE, else asked on the terminal")
    package static let bind = Option.text("bind", "ADDR", "the address to listen on")
    package static let port = Option.parsed("port", "P", "the port (0 picks a free one)", { UInt16($0) }) { "--port must be 0 to 65535, got '\($0)'" }
    package static let tlsCert = Option.text("tls-cert", "F", "serve HTTPS with this PEM certificate")
    package static let tlsKey = Option.text("tls-key", "F", "and this PEM key")

    /// The priorities by name: `high` is the most urgent, 3; `none` is the least, 0.
    private static let priorityNames: [String: UInt8] = ["none": 0, "low": 1, "medium": 2, "high": 3]

    /// A priority as 0 to 3 or by name (``priorityNames``).
    private static func priorityValue(_ text: String) -> UInt8? {
        UInt8(text).flatMap { $0 <= 3 ? $0 : nil } ?? priorityNames[text.lowercased()]
    }

    /// `KEY=VALUE` with a key that is not empty.
    private static func metaEntry(_ text: String) -> (key: String, value: String)? {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else { return nil }
        return (String(text[..<eq]), String(text[text.index(after: eq)...]))
    }

    private static func formatRefusal(_ listed: String, _ text: String) -> String {
        "--format must be \(listed), not \(DateInput.shown(text))"
    }
}

/// Every option without a value, declared once; read through ``ParsedArguments/has(_:)``.
package enum Flags {
    static let quick = Flag("quick", short: "q", "read the title, due, #tags, +list, !priority and rule from TEXT (Spec/cli.md, Quick add)")
    package static let json = Flag("json", "print JSON (the task form) instead of text")
    static let noNotes = Flag("no-notes", "remove the notes")
    static let noDue = Flag("no-due", "remove the due date")
    static let noPriority = Flag("no-priority", "remove the priority")
    static let noList = Flag("no-list", "take it out of its list")
    static let noRecur = Flag("no-recur", "stop it repeating")
    static let noParent = Flag("no-parent", "move it to the top level")
    static let noWait = Flag("no-wait", "show it again")
    static let noScheduled = Flag("no-scheduled", "remove the planned date")
    static let start = Flag("start", "mark it in progress as of now")
    static let stop = Flag("stop", "mark it no longer in progress")
    static let force = Flag("force", "mark a task with open subtasks done without asking")

    static let all = Flag("all", "open and done tasks, waiting ones too")
    static let done = Flag("done", "done tasks only")
    static let deleted = Flag("deleted", "deleted tasks, to restore")
    static let waiting = Flag("waiting", "only tasks hidden until their wait date")
    static let overdue = Flag("overdue", "only tasks whose due date or time has passed")

    static let verify = Flag("verify", "check the saved state against the logs")
    package static let watch = Flag("watch", "keep syncing until interrupted")
    static let verbose = Flag("verbose", "say both what changed in tasks and what moved (operations, bytes, files)")
    static let encrypt = Flag("encrypt", "encrypt the folder (a passphrase is needed)")
    static let rekey = Flag("rekey", "start a new key epoch under a new passphrase")
    package static let allowGuest = Flag("allow-guest", "serve without a token (loopback only)")
}

extension Option where Value == Due {
    /// A date as people type it (``DateInput``).
    static func date(_ name: String, _ value: String, _ help: String) -> Option {
        .parsed(name, value, help, { DateInput.parse($0) }, refusal: { DateInput.refusal(name, $0) })
    }
}
