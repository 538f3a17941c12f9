import CRDTCore

/// A task as users see it: the winning value of every field, and the derived times.
public struct TaskItem: Sendable, Equatable {
    public var id: TaskID
    public var title: String
    public var notes: String?
    public var isDone: Bool
    /// The time of the winning write that set `done` to true (nil when open).
    public var completedAt: Timestamp?
    public var priority: UInt8?
    public var due: Due?
    public var tags: [String]
    public var list: String?
    public var meta: [String: String]
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    /// Whether the task has been removed from the list (it can be restored).
    public var isDeleted: Bool

    init(id: TaskID, record r: TaskRecord, isDeleted: Bool) {
        self.id = id
        title = r.title?.value ?? ""
        notes = r.notes?.value ?? nil
        isDone = r.done?.value ?? false
        completedAt = isDone ? r.done?.stamp.time : nil
        priority = r.priority?.value ?? nil
        due = r.due?.value ?? nil
        tags = r.tags.tags.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        list = r.list?.value ?? nil
        var m: [String: String] = [:]
        for (k, reg) in r.meta { if let v = reg.value { m[k] = v } }
        meta = m
        createdAt = r.createdAt ?? .zero
        updatedAt = r.updatedAt
        self.isDeleted = isDeleted
    }
}
