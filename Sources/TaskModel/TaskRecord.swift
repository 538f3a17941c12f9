import CRDTCore

/// Everything the state knows about one task id: one last-writer-wins register per field,
/// the tag set, and the derived times. Present or not is decided by ``TaskState/membership``.
public struct TaskRecord: Sendable, Equatable {
    public var title: LWWRegister<String>?
    public var notes: LWWRegister<String?>?
    public var done: LWWRegister<Bool>?
    public var priority: LWWRegister<UInt8?>?
    public var due: LWWRegister<Due?>?
    public var list: LWWRegister<String?>?
    public var meta: [String: LWWRegister<String?>] = [:]
    public var tags = ORSet<String>()
    /// Time of the task's first add (the least add time seen).
    public var createdAt: Timestamp?
    /// Time of the latest operation on the task.
    public var updatedAt: Timestamp = .zero

    public init() {}

    mutating func touch(_ t: Timestamp) {
        if t > updatedAt { updatedAt = t }
    }

    mutating func apply(_ write: FieldWrite, _ stamp: Stamp) {
        switch write {
        case .title(let v): title.assign(v, at: stamp)
        case .notes(let v): notes.assign(v, at: stamp)
        case .done(let v): done.assign(v, at: stamp)
        case .priority(let v): priority.assign(v, at: stamp)
        case .due(let v): due.assign(v, at: stamp)
        case .list(let v): list.assign(v, at: stamp)
        case .meta(let key, let v):
            if meta[key] == nil {
                meta[key] = LWWRegister(value: v, stamp: stamp)
            } else {
                meta[key]!.assign(v, at: stamp)
            }
        case .unknown: break
        }
    }

    public mutating func merge(_ o: TaskRecord) {
        title = title.merging(o.title)
        notes = notes.merging(o.notes)
        done = done.merging(o.done)
        priority = priority.merging(o.priority)
        due = due.merging(o.due)
        list = list.merging(o.list)
        for (k, r) in o.meta { meta[k] = meta[k].merging(r) }
        tags.merge(o.tags)
        if let c = o.createdAt, createdAt.map({ c < $0 }) ?? true { createdAt = c }
        touch(o.updatedAt)
    }
}
