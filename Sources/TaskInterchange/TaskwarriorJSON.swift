@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// Tasks as Taskwarrior's JSON (`task export`, `task import`) and back
/// (Spec/interop.md, "Taskwarrior").
package enum TaskwarriorJSON {
    /// The prefix of the meta keys that hold a task's Taskwarrior attributes that are strings
    /// and that this mapping has no field for (UDAs, `wait`, `scheduled`, ...).
    package static let metaPrefix = "taskwarrior."
    /// The attribute holding a task id that is not a UUID (Taskwarrior needs one).
    static let idAttribute = "tasklogid"
    /// Attributes Taskwarrior computes or this mapping reads; never kept in meta.
    static let known: Set<String> = Set<String>([
        "id", "uuid", "description", "status", "entry", "modified", "end", "due", "priority", "project", "tags",
        "annotations", "urgency", idAttribute,
    ]).union(planningAttributes)

    /// Every task as a JSON array Taskwarrior imports.
    package static func export(_ tasks: [TaskItem]) -> [UInt8] {
        var w = JSONWriter()
        var children: [TaskID: [String]] = [:]
        for t in tasks { if let parent = t.parent { children[parent, default: []].append(uuidText(t.id)) } }
        w.raw("[")
        for (i, t) in tasks.enumerated() {
            w.raw(i == 0 ? "\n" : ",\n")
            write(t, children: children[t.id] ?? [], &w)
        }
        w.raw("\n]\n")
        return w.bytes
    }

    private static func write(_ t: TaskItem, children: [String], _ w: inout JSONWriter) {
        // A Taskwarrior template stays one: done here, so that it makes no occurrence itself.
        let template = t.isDone && t.meta[metaPrefix + "status"] == "recurring"
        w.raw("{\"uuid\":")
        w.string(uuidText(t.id))
        if t.id.uuid == nil { pair(idAttribute, t.id.rawValue, &w) }
        pair("description", t.title, &w)
        pair("status", template ? "recurring" : t.isDone ? "completed" : "pending", &w)
        pair("entry", t.meta[metaPrefix + "entry"] ?? stamp(t.createdAt.physical), &w)
        pair("modified", stamp(t.updatedAt.physical), &w)
        if t.isDone, !template, let end = t.completedAt { pair("end", stamp(end.physical), &w) }
        if let due = t.due { pair("due", dueText(due), &w) }
        if let p = t.priority, p > 0 { pair("priority", ["L", "M", "H"][Int(min(p, 3)) - 1], &w) }
        if let list = t.list { pair("project", list, &w) }
        if !t.tags.isEmpty {
            w.raw(",\"tags\":[")
            for (i, tag) in t.tags.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(tag)
            }
            w.raw("]")
        }
        writePlanning(t, children: children, &w)
        writeAnnotations(t, &w)
        writeKeptAttributes(t, &w)
        w.raw("}")
    }

    static func pair(_ key: String, _ value: String, _ w: inout JSONWriter) {
        w.raw(",")
        w.string(key)
        w.raw(":")
        w.string(value)
    }

    /// A task's id as a UUID: its own, or one derived from it.
    static func uuidText(_ id: TaskID) -> String {
        if id.uuid != nil { return id.rawValue }
        let h = ContentHash.xxh3_128(Array(("taskwarrior\u{0}" + id.rawValue).utf8))
        return TaskID(uuidHigh: h.high, low: h.low).rawValue
    }

    /// Milliseconds since the epoch as Taskwarrior writes a time: `YYYYMMDDTHHMMSSZ`.
    static func stamp(_ ms: UInt64) -> String { stamp(milliseconds: Int64(clamping: ms)) }

    static func stamp(milliseconds ms: Int64) -> String {
        let iso = CivilTime.instantString(milliseconds: ms)  // YYYY-MM-DDTHH:MM:SS.sssZ
        return String(iso.prefix(19).filter { $0 != "-" && $0 != ":" }) + "Z"
    }

    /// A due date (midnight UTC) or instant as a Taskwarrior time, before 1970 too, so that
    /// it reads back as it was.
    static func dueText(_ due: Due) -> String {
        switch due {
        case .date(days: let days): stamp(milliseconds: days.multipliedReportingOverflow(by: 86_400_000).partialValue)
        case .instant(milliseconds: let ms): stamp(milliseconds: ms)
        }
    }
}
