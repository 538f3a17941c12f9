@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

extension Context {
    /// `tasklog undo`: reverts this device's last command that changed tasks, through
    /// ``TaskStore/undo()`` (Spec/cli.md, "Undo"), and says what it did.
    func undo() throws -> Int32 {
        _ = try positionals(0...0, "")
        guard let undone = try writableStore().undo() else {
            throw CommandFailure(message: "nothing to undo: no command of this device that changed tasks is left to revert")
        }
        if json {
            confirm("", undone.tasks)
            return 0
        }
        let names = undone.tasks.map { "\(Render.shortID($0.id)) \(TerminalText.escaped($0.title))" }.joined(separator: ", ")
        Output.line("Undid \(TerminalText.escaped(undone.name)) of \(names)")
        for t in undone.tasks {
            guard let fields = undone.keptFields[t.id] else { continue }
            Output.line("Left \(fields.joined(separator: ", ")) of \(Render.shortID(t.id)) as it is: another device changed it since")
        }
        return 0
    }
}
