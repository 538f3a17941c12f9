#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// This device's undo stack (Spec/cli.md, "Undo"): `<store>/undo`, one JSON line per command
/// that wrote tasks, with each task before and after it in the task form. Appended without
/// fsync (losing it in a crash loses only the ability to undo), kept to the last 50.
struct UndoLog {
    /// One task as a command found it and left it.
    struct Change {
        var before: TaskPatch?
        var after: TaskPatch
        var deletedBefore: Bool
        var deletedAfter: Bool
    }

    struct Entry {
        var command: String
        var changes: [Change]
    }

    static let kept = 50
    let path: String

    init(store: TaskStore) { path = Posix.join(store.path, "undo") }

    /// Appends one command's changes: `before` is each task as it was (nil when the command made it).
    func record(_ command: String, before: [TaskID: TaskItem], after: [TaskItem]) {
        var w = JSONWriter()
        w.raw("{\"command\":")
        w.string(command)
        w.raw(",\"tasks\":[")
        for (i, t) in after.enumerated() {
            w.raw(i == 0 ? "{\"before\":" : ",{\"before\":")
            if let b = before[t.id] { w.task(b) } else { w.raw("null") }
            w.raw(",\"after\":")
            w.task(t)
            w.raw(before[t.id]?.isDeleted == true ? ",\"deletedBefore\":true" : ",\"deletedBefore\":false")
            w.raw(t.isDeleted ? ",\"deletedAfter\":true}" : ",\"deletedAfter\":false}")
        }
        w.raw("]}\n")
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        _ = w.bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var st = stat()
        let size = fstat(fd, &st) == 0 ? Int(st.st_size) : 0
        close(fd)
        // Now and then (past 256 KiB), cut the file down to the newest commands.
        if size > Self.trimAbove, let bytes = try? Posix.readFile(path) {
            let lines = bytes.split(separator: 10).suffix(Self.kept)
            try? Posix.writeAtomically(path, Array(lines.joined(separator: [10])) + [10], sync: false)
        }
    }

    static let trimAbove = 256 << 10

    /// Takes the newest entry off the stack; nil when it is empty.
    func pop() throws -> Entry? {
        guard let bytes = try Posix.readFile(path) else { return nil }
        var lines = bytes.split(separator: 10)
        guard let last = lines.popLast() else { return nil }
        try Posix.writeAtomically(path, Array(lines.suffix(Self.kept - 1).joined(separator: [10])) + (lines.isEmpty ? [] : [10]), sync: false)
        return Self.entry(Array(last))
    }

    private static func entry(_ line: [UInt8]) -> Entry? {
        guard let entry = try? JSONParser.parse(line), case .string(let command)? = entry["command"],
            case .array(let tasks)? = entry["tasks"]
        else { return nil }
        var changes: [Change] = []
        for t in tasks {
            guard let afterJSON = t["after"], let after = try? TaskPatch(json: afterJSON) else { return nil }
            let before = t["before"].flatMap { $0 == .null ? nil : try? TaskPatch(json: $0) }
            changes.append(Change(
                before: before, after: after, deletedBefore: t["deletedBefore"] == .bool(true),
                deletedAfter: t["deletedAfter"] == .bool(true)))
        }
        return Entry(command: command, changes: changes)
    }
}

/// What undoing one task's change writes, and which fields it leaves because another device
/// changed them since.
struct UndoPlan {
    var patch: TaskPatch
    var left: [String] = []
    var writes: Bool

    init(_ change: UndoLog.Change, current: TaskItem) {
        var patch = TaskPatch(id: current.id)
        guard let before = change.before else {
            // The command made the task: undoing it removes the task.
            patch.deleted = !current.isDeleted
            (self.patch, writes) = (patch, patch.deleted)
            return
        }
        if change.deletedAfter != change.deletedBefore {
            patch.deleted = change.deletedBefore
            (self.patch, writes) = (patch, current.isDeleted != change.deletedBefore)
            return
        }
        let (after, now) = (change.after, TaskPatch(current))
        var left: [String] = []
        func revert<V: Equatable>(_ name: String, _ field: WritableKeyPath<TaskPatch, V>) {
            guard before[keyPath: field] != after[keyPath: field] else { return }
            if now[keyPath: field] == after[keyPath: field] { patch[keyPath: field] = before[keyPath: field] } else { left.append(name) }
        }
        revert("title", \.title)
        revert("notes", \.notes)
        revert("done", \.done)
        revert("priority", \.priority)
        revert("due", \.due)
        revert("list", \.list)
        // Tags the command added come off, tags it removed go back; others' changes stay.
        let (b, a, c) = (Set(before.tags ?? []), Set(after.tags ?? []), Set(now.tags ?? []))
        if b != a { patch.tags = Array(c.subtracting(a.subtracting(b)).union(b.subtracting(a))).sorted() }
        if before.meta != after.meta {
            var meta = now.meta ?? [:]
            for key in Set((before.meta ?? [:]).keys).union((after.meta ?? [:]).keys) where before.meta?[key] != after.meta?[key] {
                if meta[key] == after.meta?[key] { meta[key] = before.meta?[key] } else { left.append("meta." + key) }
            }
            patch.meta = meta
        }
        (self.patch, self.left, writes) = (patch, left, true)
    }
}

extension TaskPatch {
    /// The task's fields as a patch that would set them all.
    init(_ t: TaskItem) {
        self.init(id: t.id)
        title = t.title
        notes = .some(t.notes)
        done = t.isDone
        priority = .some(t.priority)
        due = .some(t.due)
        tags = t.tags
        list = .some(t.list)
        meta = t.meta
    }
}
