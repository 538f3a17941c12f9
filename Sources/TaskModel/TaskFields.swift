import CRDTCore

/// Where the fields of a task read from a saved state go (``StateCodec``): a record keeps
/// every register with its stamp; a listing needs only the values, and a task it skips only
/// its creation time. One reader serves all three, specialised for each.
protocol TaskFields {
    /// Whether stamps are wanted; when not, they are stepped over, and a stand-in with no
    /// operation (and no time, except for `done`) is passed.
    static var keepsStamps: Bool { get }
    /// Whether values are wanted; when not, strings are stepped over and passed empty.
    static var keepsValues: Bool { get }
    mutating func times(created: Timestamp?, updated: Timestamp)
    mutating func title(_ value: String, _ stamp: Stamp)
    mutating func notes(_ value: String?, _ stamp: Stamp)
    mutating func done(_ value: Bool, _ stamp: Stamp)
    mutating func priority(_ value: UInt8?, _ stamp: Stamp)
    mutating func due(_ value: Due?, _ stamp: Stamp)
    mutating func list(_ value: String?, _ stamp: Stamp)
    mutating func meta(_ key: String, _ value: String?, _ stamp: Stamp)
    /// The tag set: each tag with its add dots, and the dots some remove observed.
    mutating func tags(_ added: [(String, [OperationID])], removed: [OperationID])
}

extension TaskRecord: TaskFields {
    static var keepsStamps: Bool { true }
    static var keepsValues: Bool { true }

    mutating func times(created: Timestamp?, updated: Timestamp) {
        createdAt = created
        updatedAt = updated
    }

    mutating func title(_ value: String, _ stamp: Stamp) { title = LWWRegister(value: value, stamp: stamp) }
    mutating func notes(_ value: String?, _ stamp: Stamp) { notes = LWWRegister(value: value, stamp: stamp) }
    mutating func done(_ value: Bool, _ stamp: Stamp) { done = LWWRegister(value: value, stamp: stamp) }
    mutating func priority(_ value: UInt8?, _ stamp: Stamp) { priority = LWWRegister(value: value, stamp: stamp) }
    mutating func due(_ value: Due?, _ stamp: Stamp) { due = LWWRegister(value: value, stamp: stamp) }
    mutating func list(_ value: String?, _ stamp: Stamp) { list = LWWRegister(value: value, stamp: stamp) }
    mutating func meta(_ key: String, _ value: String?, _ stamp: Stamp) { meta[key] = LWWRegister(value: value, stamp: stamp) }

    mutating func tags(_ added: [(String, [OperationID])], removed: [OperationID]) {
        var tags = ORSet<String>()
        if !removed.isEmpty { tags.remove("", observed: removed) }
        for (tag, dots) in added { for d in dots { tags.add(tag, tag: d) } }
        self.tags = tags
    }
}

/// A task as a listing shows it is read without its stamps (but for the time of `done`).
extension TaskItem: TaskFields {
    static var keepsStamps: Bool { false }
    static var keepsValues: Bool { true }

    /// A live task with no field written yet, to read into.
    init(reading id: TaskID) {
        self.init(
            id: id, title: "", notes: nil, isDone: false, completedAt: nil, priority: nil, due: nil, tags: [], list: nil,
            meta: [:], createdAt: .zero, updatedAt: .zero, isDeleted: false)
    }

    mutating func times(created: Timestamp?, updated: Timestamp) {
        createdAt = created ?? .zero
        updatedAt = updated
    }

    mutating func title(_ value: String, _ stamp: Stamp) { title = value }
    mutating func notes(_ value: String?, _ stamp: Stamp) { notes = value }

    mutating func done(_ value: Bool, _ stamp: Stamp) {
        isDone = value
        completedAt = value ? stamp.time : nil
    }

    mutating func priority(_ value: UInt8?, _ stamp: Stamp) { priority = value }
    mutating func due(_ value: Due?, _ stamp: Stamp) { due = value }
    mutating func list(_ value: String?, _ stamp: Stamp) { list = value }
    mutating func meta(_ key: String, _ value: String?, _ stamp: Stamp) { meta[key] = value }

    /// The tags with a dot no remove observed, in byte order (as a record's item lists them).
    mutating func tags(_ added: [(String, [OperationID])], removed: [OperationID]) {
        let removed = Set(removed)
        tags = Set(added.filter { $0.1.contains { !removed.contains($0) } }.map(\.0))
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

/// Only a task's creation time: what reading past a task that is not listed needs.
struct CreationTime: TaskFields {
    static var keepsStamps: Bool { false }
    static var keepsValues: Bool { false }

    var created: Timestamp?

    mutating func times(created: Timestamp?, updated: Timestamp) { self.created = created }
    mutating func title(_ value: String, _ stamp: Stamp) {}
    mutating func notes(_ value: String?, _ stamp: Stamp) {}
    mutating func done(_ value: Bool, _ stamp: Stamp) {}
    mutating func priority(_ value: UInt8?, _ stamp: Stamp) {}
    mutating func due(_ value: Due?, _ stamp: Stamp) {}
    mutating func list(_ value: String?, _ stamp: Stamp) {}
    mutating func meta(_ key: String, _ value: String?, _ stamp: Stamp) {}
    mutating func tags(_ added: [(String, [OperationID])], removed: [OperationID]) {}
}
