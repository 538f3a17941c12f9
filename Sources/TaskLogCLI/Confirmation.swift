#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// What a command that writes says about the tasks it wrote (Spec/cli.md, "Confirmations"):
/// with `--json`, the tasks as a JSON array; on a terminal, one line each ("Completed a5d9ea2f
/// Buy milk"); otherwise nothing, so scripts see exactly what they always saw.
extension Context {
    static let standardOutputIsTerminal = isatty(1) == 1

    /// Runs `write` on the tasks `ids` as one change `undo` can revert, named `command`,
    /// then confirms with `verb`, or with what `describe` says of a task when that is not nil.
    func writing(
        _ command: String, _ verb: String, _ ids: [TaskID], in store: TaskStore, detail: String = "", jsonArray: Bool = true,
        describe: (TaskItem) -> (verb: String, detail: String)? = { _ in nil },
        _ write: () throws -> Void
    ) throws {
        try store.undoable(command, write)
        let after = try ids.compactMap { try store.task($0) }
        if jsonArray || !json { confirm(verb, after, detail: detail, describe: describe) }
    }

    func confirm(
        _ verb: String, _ tasks: [TaskItem], detail: String = "",
        describe: (TaskItem) -> (verb: String, detail: String)? = { _ in nil }
    ) {
        guard json || Self.standardOutputIsTerminal else { return }
        if json {
            var w = JSONTaskArrayWriter()
            tasks.forEach { w.take($0) }
            w.finish()
            return
        }
        for t in tasks {
            let (verb, detail) = describe(t) ?? (verb, detail)
            Output.line("\(verb) \(Render.shortID(t.id)) \(TerminalText.escaped(t.title))\(detail)")
        }
    }

    /// The live tasks the positionals name: as typed when each is the whole id of a live task
    /// (read through the snapshot's index, nothing resolved), else resolved, which says why a
    /// deleted or unknown one is refused. The store's calls then need not resolve them again.
    func namedIDs(_ store: TaskStore) throws -> [TaskID] {
        let whole = try positionals(1...Int.max, "task ID").compactMap(TaskID.init)
        if whole.count == arguments.positionals.count {
            let live = try store.liveTasks(Set(whole))
            if whole.allSatisfy({ live[$0] != nil }) { return whole }
        }
        return try ids(store)
    }
}
