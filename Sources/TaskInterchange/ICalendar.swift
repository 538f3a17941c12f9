@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// Tasks as iCalendar VTODOs and back (Spec/interop.md, "iCalendar").
///
/// What this project does not model (alarms, recurrence, X- properties, another writer's
/// CREATED or COMPLETED) is kept verbatim in meta under `ical.` and written back.
package enum ICalendar {
    /// The prefix of the meta keys that hold what a VTODO carries beyond the task's fields.
    package static let metaPrefix = "ical."
    /// Unmodelled properties and components, as unfolded lines joined by newlines.
    static let keptKey = "ical.props"
    /// The UID, when it is not a valid task id (the task's id is then derived from it).
    static let uidKey = "ical.uid"
    /// The VTIMEZONEs that kept properties refer to.
    static let zonesKey = "ical.vtimezone"
    /// Other VTODOs with the same UID (recurrence overrides), verbatim.
    static let overridesKey = "ical.overrides"
    static let productID = "-//TaskLog//TaskLog//EN"

    /// Every task as one VCALENDAR, with `X-TASKLOG-LIST` naming each task's list.
    package static func calendar(of tasks: [TaskItem]) -> String {
        document(tasks.map { vtodo($0, naming: true) }, zones: tasks.compactMap { $0.meta[zonesKey] })
    }

    /// One task as a VCALENDAR (a CalDAV resource). On this project's server the list is the
    /// collection the task is in; on another server `X-TASKLOG-LIST` names it.
    package static func object(of task: TaskItem, namingList: Bool = false) -> String {
        document([vtodo(task, naming: namingList)], zones: task.meta[zonesKey].map { [$0] } ?? [])
    }

    private static func document(_ todos: [[String]], zones: [String]) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:" + productID]
        var seen = Set<String>()
        for block in zones.flatMap(zoneBlocks) where seen.insert(block).inserted {
            lines += block.split(separator: "\n").map(String.init)
        }
        for t in todos { lines += t }
        lines.append("END:VCALENDAR")
        return lines.map(ICalendarText.folded).joined()
    }

    /// Splits kept VTIMEZONE text into one block per zone.
    private static func zoneBlocks(_ text: String) -> [String] {
        text.split(separator: "\nBEGIN:VTIMEZONE").enumerated().map { $0.offset == 0 ? String($0.element) : "BEGIN:VTIMEZONE" + $0.element }
    }

    /// The VTODO lines (unfolded) of a task, and of its kept overrides.
    /// The kept lines of a task: properties first, then subcomponents (written as they are).
    static func keptLines(of t: TaskItem?) -> (properties: ArraySlice<String>, components: ArraySlice<String>) {
        let lines = (t?.meta[keptKey] ?? "").split(separator: "\n").map(String.init)
        let count = lines.firstIndex { ContentLine(parsing: Substring($0))?.name == "BEGIN" } ?? lines.count
        return (lines[..<count], lines[count...])
    }

    static func vtodo(_ t: TaskItem, naming list: Bool) -> [String] {
        let keptLines = keptLines(of: t)
        let kept = keptLines.properties.compactMap { ContentLine(parsing: Substring($0)) }
        let keptNamed = { (name: String) in kept.first { $0.name == name } }
        var lines = ["BEGIN:VTODO", ContentLine("UID", ICalendarText.escaped(t.meta[uidKey] ?? t.id.rawValue)).raw]
        lines.append("DTSTAMP:" + utc(t.updatedAt))
        lines.append(keptNamed("CREATED")?.raw ?? "CREATED:" + utc(t.createdAt))
        lines.append("LAST-MODIFIED:" + utc(t.updatedAt))
        lines.append("SUMMARY:" + ICalendarText.escaped(t.title))
        if let notes = t.notes { lines.append("DESCRIPTION:" + ICalendarText.escaped(notes)) }
        switch t.due {
        case .date(let d)?: lines.append("DUE;VALUE=DATE:" + ICalendarTime.dateText(days: d))
        case .instant(let ms)?: lines.append("DUE:" + ICalendarTime.utcText(milliseconds: ms))
        case nil: break
        }
        if let p = t.priority, p > 0 {
            let written = keptNamed("PRIORITY").flatMap { Int($0.value).flatMap(priority) == p ? $0.raw : nil }
            lines.append(written ?? "PRIORITY:\(icalPriority(p))")
        }
        if t.isDone {
            lines += ["STATUS:COMPLETED", keptNamed("COMPLETED")?.raw ?? "COMPLETED:" + utc(t.completedAt ?? t.updatedAt), "PERCENT-COMPLETE:100"]
        } else {
            lines.append(keptNamed("STATUS")?.raw ?? "STATUS:NEEDS-ACTION")
            if let p = keptNamed("PERCENT-COMPLETE"), p.value != "100" { lines.append(p.raw) }
        }
        if !t.tags.isEmpty { lines.append("CATEGORIES:" + t.tags.map(ICalendarText.escaped).joined(separator: ",")) }
        if list, let name = t.list { lines.append("X-TASKLOG-LIST:" + ICalendarText.escaped(name)) }
        lines += planningLines(t, kept: kept)
        for key in t.meta.keys.sorted() where !key.hasPrefix(metaPrefix) && !propertyRegisters.contains(key) {
            lines.append(ContentLine("X-TASKLOG-META", ICalendarText.escaped(t.meta[key]!), parameters: [.init(name: "KEY", value: caretEncoded(key))]).raw)
        }
        let shadowed: Set<String> = ["CREATED", "PRIORITY", "COMPLETED", "STATUS", "PERCENT-COMPLETE"]
        lines += keptLines.properties.filter { line in
            ContentLine(parsing: Substring(line)).map { !shadowed.contains($0.name) && stillKept($0, beside: t) } ?? true
        }
        lines += keptLines.components
        lines.append("END:VTODO")
        if let overrides = t.meta[overridesKey] { lines += overrides.split(separator: "\n").map(String.init) }
        return lines
    }

    /// PRIORITY for a priority of 0 to 3: 3 is 1 (high), 2 is 5 (medium), 1 is 9 (low).
    package static func icalPriority(_ p: UInt8) -> Int { [0, 9, 5, 1][Int(min(p, 3))] }

    /// The priority a PRIORITY value stands for: 1 to 4 high (3), 5 medium (2), 6 to 9 low
    /// (1), 0 or none undefined (nil).
    package static func priority(_ value: Int) -> UInt8? {
        switch value {
        case 1...4: 3
        case 5: 2
        case 6...9: 1
        default: nil
        }
    }

    static func utc(_ t: Timestamp) -> String { ICalendarTime.utcText(milliseconds: Int64(t.physical)) }

    /// A parameter value in RFC 6868 caret encoding (`^'` for a quote, `^n` a newline, `^^`).
    static func caretEncoded(_ s: String) -> String {
        s.replacingAll("^", "^^").replacingAll("\"", "^'").replacingAll("\n", "^n")
    }

    static func caretDecoded(_ s: String) -> String {
        var out = ""
        var caret = false
        for c in s {
            if caret {
                out += c == "n" ? "\n" : c == "'" ? "\"" : c == "^" ? "^" : "^" + String(c)
                caret = false
            } else if c == "^" {
                caret = true
            } else {
                out.append(c)
            }
        }
        return caret ? out + "^" : out
    }

    /// The id of a task whose UID is not a valid task id.
    static func derivedID(uid: String) -> TaskID {
        let h = ContentHash.xxh3_128(Array(("ical\u{0}" + uid).utf8))
        return TaskID(uuidHigh: h.high, low: h.low)
    }
}

extension String {
    /// This string with every `target` replaced (no Foundation needed).
    package func replacingAll(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
