@_spi(Engine) import CRDTCore

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
    /// The tasks this one waits for (an OR-set, Spec/crdt.md); blocked while one is open.
    public var dependencies: [TaskID]
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
        let done = r.pointee.done?.value ?? false
        // The rare fields are read from their box, when there is one: the record's accessors
        // would make an empty set or dictionary for each that is missing. All fields are set
        // in one call, which builds the item in place (assigned one by one, it was built
        // aside and then copied).
        let rare = r.pointee.rare
        let split: (tags: [String], dependencies: [TaskID]) = rare.map { Self.splitting(Self.tags($0)) } ?? ([], [])
        self.init(
            id: id, title: r.pointee.title?.value ?? "", notes: rare?.notes?.value ?? nil, isDone: done,
            completedAt: done ? r.pointee.done?.stamp.time : nil, priority: r.pointee.priority?.value ?? nil,
            due: r.pointee.due?.value ?? nil, tags: split.tags, dependencies: split.dependencies, list: rare?.list?.value ?? nil,
            meta: rare.map(Self.meta) ?? [:], createdAt: r.pointee.createdAt ?? .zero,
            updatedAt: r.pointee.updatedAt, isDeleted: isDeleted)
    }

    package init(
        id: TaskID, title: String, notes: String?, isDone: Bool, completedAt: Timestamp?, priority: UInt8?, due: Due?,
        tags: [String], dependencies: [TaskID] = [], list: String?, meta: [String: String], createdAt: Timestamp,
        updatedAt: Timestamp, isDeleted: Bool
    ) {
        self.id = id
        self.title = title
        self.notes = notes
        self.isDone = isDone
        self.completedAt = completedAt
        self.priority = priority
        self.due = due
        self.tags = tags
        self.dependencies = dependencies
        self.list = list
        self.meta = meta
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.isDeleted = isDeleted
    }

    private static func tags(_ rare: RareFields) -> [String] {
        rare.tags.isEmpty ? [] : rare.tags.dotsByElement.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    private static func meta(_ rare: RareFields) -> [String: String] {
        var m: [String: String] = [:]
        for (k, reg) in rare.meta { if let v = reg.value { m[k] = v } }
        return m
    }
}
