@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

extension Context {
    /// `tasklog undo`: reverts this device's last command by writing operations that put back
    /// what it changed (Spec/cli.md, "Undo"). A field another device changed since is left.
    func undo() throws -> Int32 {
        _ = try positionals(0...0, "")
        let store = try writableStore()
        guard let entry = try UndoLog(store: store).pop() else {
            throw CommandFailure(message: "nothing to undo: no command of this device that changed tasks is left to revert")
        }
        var patches: [TaskPatch] = []
        var touched: [TaskID] = []
        var left: [(TaskItem, [String])] = []
        for change in entry.changes {
            guard let id = change.after.id, let current = try store.task(id) else { continue }
            let plan = UndoPlan(change, current: current)
            if plan.writes { patches.append(plan.patch) }
            if !plan.left.isEmpty { left.append((current, plan.left)) }
            touched.append(id)
        }
        if !patches.isEmpty { _ = try store.apply(patches) }
        let now = try touched.compactMap { try store.task($0) }
        if json {
            confirm("", now)
            return 0
        }
        let names = now.map { "\(Render.shortID($0.id)) \(TerminalText.escaped($0.title))" }.joined(separator: ", ")
        Output.line("Undid \(entry.command) of \(names)")
        for (t, fields) in left {
            Output.line("Left \(fields.joined(separator: ", ")) of \(Render.shortID(t.id)) as it is: another device changed it since")
        }
        return 0
    }
}
