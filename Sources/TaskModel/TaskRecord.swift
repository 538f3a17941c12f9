@_spi(Engine) import CRDTCore

/// Everything the state knows about one task id: one last-writer-wins register per field,
/// the tag set, and the derived times. Present or not is decided by ``TaskState/membership``.
///
/// The fields most tasks have (title, done, priority, due, the times) are held inline; notes,
/// list, meta and tags sit in a shared box that exists only once one of them is written.
/// A record of a typical task is then a third smaller, and a state of many tasks touches
/// that much less memory. The box is copied on write, so records keep value semantics.
@_spi(Engine) public struct TaskRecord: Sendable, Equatable {
    public var title: LWWRegister<String>?
    public var done: LWWRegister<Bool>?
    public var priority: LWWRegister<UInt8?>?
    public var due: LWWRegister<Due?>?
    /// Time of the task's first add (the least add time seen).
    public var createdAt: Timestamp?
    /// Time of the latest operation on the task.
    public var updatedAt: Timestamp = .zero
    @usableFromInline var rare: RareFields?

    public init() {}

    public var notes: LWWRegister<String?>? {
        get { rare?.notes }
        _modify { yield &uniqueRare().notes }
    }

    public var list: LWWRegister<String?>? {
        get { rare?.list }
        _modify { yield &uniqueRare().list }
    }

    public var meta: [String: LWWRegister<String?>] {
        get { rare?.meta ?? [:] }
        _modify { yield &uniqueRare().meta }
    }

    public var tags: ORSet<String> {
        get { rare?.tags ?? ORSet() }
        _modify { yield &uniqueRare().tags }
    }

    /// The box of rare fields, created or copied so that this record alone holds it.
    @usableFromInline mutating func uniqueRare() -> RareFields {
        if rare == nil {
            rare = RareFields()
        } else if !isKnownUniquelyReferenced(&rare!) {
            rare = RareFields(copying: rare!)
        }
        return rare!
    }

    public static func == (a: TaskRecord, b: TaskRecord) -> Bool {
        a.title == b.title && a.done == b.done && a.priority == b.priority && a.due == b.due
            && a.createdAt == b.createdAt && a.updatedAt == b.updatedAt
            && a.notes == b.notes && a.list == b.list && a.meta == b.meta && a.tags == b.tags
    }

    mutating func touch(_ t: Timestamp) {
        if t > updatedAt { updatedAt = t }
    }

    /// Applies a write to its field's register.
    /// - Returns: the text the register lets go (its previous value when `write` wins, else
    ///   the write's own), as a write of that field, for the caller to release where it
    ///   likes; nil for fields that hold no text.
    @discardableResult
    mutating func apply(_ write: consuming FieldWrite, _ stamp: Stamp) -> FieldWrite? {
        switch consume write {
        case .title(let v): return title.replace(with: v, at: stamp).map(FieldWrite.title)
        case .notes(let v): return notes.replace(with: v, at: stamp).map(FieldWrite.notes)
        case .done(let v): done.assign(v, at: stamp)
        case .priority(let v): priority.assign(v, at: stamp)
        case .due(let v): due.assign(v, at: stamp)
        case .list(let v): return list.replace(with: v, at: stamp).map(FieldWrite.list)
        case .meta(let key, let v):
            if meta[key] == nil {
                meta[key] = LWWRegister(value: v, stamp: stamp)
            } else {
                meta[key]!.assign(v, at: stamp)
            }
        case .unknown: break
        }
        return nil
    }

    public mutating func merge(_ o: TaskRecord) {
        title = title.merging(o.title)
        done = done.merging(o.done)
        priority = priority.merging(o.priority)
        due = due.merging(o.due)
        if let other = o.rare {
            if rare == nil {
                rare = other  // shared until either record writes to it
            } else if rare !== other {
                let r = uniqueRare()
                r.notes = r.notes.merging(other.notes)
                r.list = r.list.merging(other.list)
                for (k, reg) in other.meta { r.meta[k] = r.meta[k].merging(reg) }
                r.tags.merge(other.tags)
            }
        }
        if let c = o.createdAt, createdAt.map({ c < $0 }) ?? true { createdAt = c }
        touch(o.updatedAt)
    }
}

/// The fields few tasks have, boxed out of ``TaskRecord``.
///
/// Invariant, which makes `@unchecked Sendable` and the unchecked exclusivity of its fields
/// safe: a box is written only while new, or through ``TaskRecord/uniqueRare()`` by the one
/// record holding it alone, while that record is changed (so exclusively). A shared box is
/// only read, by any number of threads. With exclusivity checked, every read of a field was
/// a call into the runtime (a sixth of listing every task).
@usableFromInline final class RareFields: @unchecked Sendable {
    @exclusivity(unchecked) @usableFromInline var notes: LWWRegister<String?>?
    @exclusivity(unchecked) @usableFromInline var list: LWWRegister<String?>?
    @exclusivity(unchecked) @usableFromInline var meta: [String: LWWRegister<String?>] = [:]
    @exclusivity(unchecked) @usableFromInline var tags = ORSet<String>()

    @usableFromInline init() {}

    @usableFromInline init(copying o: RareFields) {
        notes = o.notes
        list = o.list
        meta = o.meta
        tags = o.tags
    }
}
