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

    init(id: TaskID, record: TaskRecord, isDeleted: Bool) {
        self = withUnsafePointer(to: record) { TaskItem(id: id, recordAt: $0, isDeleted: isDeleted) }
    }

    /// Reads the record's fields one by one through the pointer: passing a whole record
    /// (about 380 bytes, seven references) copies and retains all of it.
    init(id: TaskID, recordAt r: UnsafePointer<TaskRecord>, isDeleted: Bool) {
        self.id = id
        title = r.pointee.title?.value ?? ""
        notes = r.pointee.notes?.value ?? nil
        isDone = r.pointee.done?.value ?? false
        completedAt = isDone ? r.pointee.done?.stamp.time : nil
        priority = r.pointee.priority?.value ?? nil
        due = r.pointee.due?.value ?? nil
        tags = r.pointee.tags.isEmpty ? [] : r.pointee.tags.dotsByElement.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        list = r.pointee.list?.value ?? nil
        var m: [String: String] = [:]
        if !r.pointee.meta.isEmpty { for (k, reg) in r.pointee.meta { if let v = reg.value { m[k] = v } } }
        meta = m
        createdAt = r.pointee.createdAt ?? .zero
        updatedAt = r.pointee.updatedAt
        self.isDeleted = isDeleted
    }
}
