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

    func confirm(_ verb: String, _ ids: [TaskID], in store: TaskStore, detail: String = "") throws {
        guard json || Self.standardOutputIsTerminal else { return }
        let tasks = try ids.compactMap { try store.task($0) }
        if json {
            var w = JSONTaskArrayWriter()
            tasks.forEach { w.take($0) }
            w.finish()
            return
        }
        for t in tasks { Output.line("\(verb) \(Render.shortID(t.id)) \(TerminalText.escaped(t.title))\(detail)") }
    }
}
