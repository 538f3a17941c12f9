@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

/// What one sync changed in this store's tasks (Spec/cli.md, "What sync says"), worked out
/// from the state before and after it. Only operations from elsewhere change the state.
struct SyncDigest {
    /// Edits made here that a later edit from another device replaced, although that device
    /// could not have seen them: they were written after all the other side held of this log.
    struct Superseded {
        var id: TaskID
        /// The title as this device had it.
        var title: String
        var fields: [String]
        var by: ReplicaID
    }

    var added = 0
    var updated = 0
    var completed = 0
    var removed = 0
    var restored = 0
    var superseded: [Superseded] = []

    /// No task changed.
    init() {}

    init(before: TaskState, after: TaskState, own: ReplicaID, peerHeldOwnThrough held: UInt64) {
        for position in after.records.indices {
            let (id, record) = after.records[position]
            let old = before.records.position(of: id)
            let (wasLive, isLive) = (old.map { before.records.liveDots(at: $0) != nil } ?? false, after.records.liveDots(at: position) != nil)
            guard let old else {
                if isLive { added += 1 }
                continue
            }
            let oldRecord = before.records[old].record
            guard oldRecord != record || wasLive != isLive else { continue }
            switch (wasLive, isLive) {
            case (false, true): restored += 1
            case (true, false): removed += 1
            case (true, true):
                guard let a = before.task(id), let b = after.task(id), TaskPatch(a) != TaskPatch(b) else { continue }
                if !a.isDone && b.isDone { completed += 1 } else { updated += 1 }
                let lost = Self.lostFields(oldRecord, record, own: own, after: held)
                if let by = lost.first?.by { superseded.append(Superseded(id: id, title: a.title, fields: lost.map(\.field), by: by)) }
            case (false, false): continue
            }
        }
    }

    /// The fields whose winning write was this device's, unseen by the other side, and is now
    /// another device's later write.
    private static func lostFields(_ a: TaskRecord, _ b: TaskRecord, own: ReplicaID, after held: UInt64) -> [(field: String, by: ReplicaID)] {
        var lost: [(field: String, by: ReplicaID)] = []
        func check<V>(_ field: String, _ old: LWWRegister<V>?, _ new: LWWRegister<V>?) {
            guard let old, let new, old.stamp != new.stamp else { return }
            let (mine, theirs) = (old.stamp.operation, new.stamp.operation)
            if mine.replica == own, mine.seq > held, theirs.replica != own { lost.append((field, theirs.replica)) }
        }
        check("title", a.title, b.title)
        check("notes", a.notes, b.notes)
        check("done", a.done, b.done)
        check("priority", a.priority, b.priority)
        check("due", a.due, b.due)
        check("list", a.list, b.list)
        for (key, register) in a.meta.sorted(by: { $0.key < $1.key }) { check("meta." + key, register, b.meta[key]) }
        return lost
    }

    /// The tasks changed, by how, in the order the line names them.
    var counts: [(name: String, count: Int)] {
        [("updated", updated), ("added", added), ("completed", completed), ("removed", removed), ("restored", restored)]
    }

    /// One line: "3 tasks updated, 1 added; 1 edit of 'Buy milk' superseded by a later one from replica 3f2a9c1e".
    var line: String {
        var parts = counts.filter { $0.count > 0 }.enumerated().map { i, c in
            i == 0 ? "\(c.count) task\(c.count == 1 ? "" : "s") \(c.name)" : "\(c.count) \(c.name)"
        }
        if parts.isEmpty { parts = ["no tasks changed"] }
        var text = parts.joined(separator: ", ")
        for s in superseded.prefix(Self.named) {
            let n = s.fields.count
            let title = s.title.count > 40 ? s.title.prefix(39) + "…" : s.title
            text += "; \(n) edit\(n == 1 ? "" : "s") of '\(title)' superseded by \(n == 1 ? "a later one" : "later ones")"
                + " from replica \(s.by.hex.prefix(8))"
        }
        let unnamed = superseded.dropFirst(Self.named).reduce(0) { $0 + $1.fields.count }
        if unnamed > 0 { text += "; \(unnamed) more edit\(unnamed == 1 ? "" : "s") superseded by later ones from other devices" }
        return text
    }

    /// How many superseded tasks the line names.
    static let named = 3

    /// The digest's members of the sync JSON object, after a comma.
    func writeJSON(_ w: inout JSONWriter) {
        w.raw(",\"tasks\":{")
        for (i, c) in counts.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(c.name)
            w.raw(":")
            w.number(Int64(c.count))
        }
        w.raw("},\"superseded\":[")
        for (i, s) in superseded.enumerated() {
            w.raw(i == 0 ? "{\"id\":" : ",{\"id\":")
            w.id(s.id)
            w.raw(",\"title\":")
            w.string(s.title)
            w.raw(",\"fields\":[")
            for (j, f) in s.fields.enumerated() {
                if j > 0 { w.raw(",") }
                w.string(f)
            }
            w.raw("],\"by\":")
            w.string(s.by.hex)
            w.raw("}")
        }
        w.raw("]")
    }
}
