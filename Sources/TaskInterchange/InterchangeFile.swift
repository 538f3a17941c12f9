@_spi(Engine) import TaskModel

/// The other task apps' files that `tasklog import` reads and `export` writes: what a file
/// states, as patches over the tasks a store holds, and tasks written in the format.
@_spi(Engine) public enum InterchangeFile: Sendable {
    case icalendar, todoTxt, taskwarrior

    /// The patches that import `bytes` in one commit. `existing` gives the store's tasks of the
    /// ids the file names (deleted ones too), so only what differs is written. `today` (local
    /// days) places a todo.txt recurrence tool's copy of an undated task (``TodoTxt``).
    /// - Throws: the ``InterchangeError`` naming the first unreadable entry, or what `existing` throws.
    public func patches(_ bytes: [UInt8], today: Int64? = nil, existing: (Set<TaskID>) throws -> [TaskItem]) throws -> [TaskPatch] {
        switch self {
        case .icalendar:
            let entries = try ICalendar.entries(of: String(decoding: bytes, as: UTF8.self))
            let tasks = try Self.byID(existing(Set(entries.compactMap(\.patch.id))))
            return entries.map { $0.patch(over: $0.patch.id.flatMap { tasks[$0] }) }
        case .todoTxt:
            let named = try TodoTxt.lines(of: String(decoding: bytes, as: UTF8.self))
            let stated = try Self.byID(existing(Set(named.compactMap(\.patch.id))))
            let lines = TodoTxt.separatingOccurrences(named, existing: stated, today: today)
            let read = lines.map { line in
                (line.patch, Dictionary(uniqueKeysWithValues: line.unknown.map { (TodoTxt.metaPrefix + $0.key, $0.value) }).merging(line.planning) { _, p in p })
            }
            let owns = { (key: String) in key.hasPrefix(TodoTxt.metaPrefix) || TodoTxt.expressedRegisters.contains(key) }
            return Self.merged(read, owns: owns, existing: try Self.byID(existing(Self.ids(read))))
        case .taskwarrior:
            let read = try TaskwarriorJSON.entries(of: bytes).map { ($0.patch, $0.meta) }
            // A task Taskwarrior shows without a priority keeps a priority of 0, which
            // Taskwarrior cannot show; any other is cleared.
            let owns = { (key: String) in TaskwarriorJSON.holdsAttribute(key) || TaskwarriorJSON.expressedRegisters.contains(key) }
            return Self.merged(read, owns: owns, existing: try Self.byID(existing(Self.ids(read)))) { patch, task in
                if patch.priority == nil && task?.priority != 0 { patch.priority = .some(nil) }
                TaskwarriorJSON.dropDerivedEntry(&patch, over: task)
            }
        }
    }

    /// Every task in this format (`export`).
    public func export(_ tasks: [TaskItem]) -> [UInt8] {
        switch self {
        case .icalendar: Array(ICalendar.calendar(of: tasks).utf8)
        case .todoTxt: Array(TodoTxt.text(of: tasks).utf8)
        case .taskwarrior: TaskwarriorJSON.export(tasks)
        }
    }

    private static func byID(_ tasks: [TaskItem]) -> [TaskID: TaskItem] {
        Dictionary(tasks.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    private static func ids(_ read: [(patch: TaskPatch, meta: [String: String])]) -> Set<TaskID> {
        Set(read.compactMap(\.patch.id))
    }

    /// Patches whose meta entries (the file's unknown attributes) replace the task's entries
    /// the format `owns`, leaving its other meta as it is; `adjust` sees each patch beside the
    /// task it names.
    private static func merged(
        _ read: [(patch: TaskPatch, meta: [String: String])], owns: (String) -> Bool, existing: [TaskID: TaskItem],
        adjust: (inout TaskPatch, TaskItem?) -> Void = { _, _ in }
    ) -> [TaskPatch] {
        read.map { item in
            var patch = item.patch
            let task = patch.id.flatMap { existing[$0] }
            let kept = (task?.meta ?? [:]).filter { !owns($0.key) }
            let meta = kept.merging(item.meta) { a, _ in a }
            if meta != task?.meta ?? [:] { patch.state(wholeMeta: meta, over: task) }
            adjust(&patch, task)
            return patch
        }
    }
}
