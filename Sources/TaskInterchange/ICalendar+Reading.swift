@_spi(Engine) import TaskModel

extension ICalendar {
    /// One task read from a VTODO: the fields it states, and whether it named a list.
    package struct Entry: Equatable {
        /// Title, notes, done, due, tags and meta always; priority only when stated (see
        /// ``patch(over:)``); list when `X-TASKLOG-LIST` is present.
        package var patch: TaskPatch
        /// The UID as written.
        package var uid: String
        /// Properties this project does not model, and CREATED, PRIORITY, STATUS, COMPLETED
        /// and PERCENT-COMPLETE when they say more than the task's own fields.
        var keptProperties: [ContentLine] = []
        /// Subcomponents (alarms), as unfolded lines.
        var keptComponents: [String] = []

        /// The patch to apply over `existing`: a VTODO without PRIORITY keeps a priority of 0
        /// (which iCalendar cannot state) and clears any other. A CREATED or COMPLETED that
        /// the task's own times give is not kept unless the task keeps it already, so a store's
        /// own export reads back unchanged.
        package func patch(over existing: TaskItem?) -> TaskPatch {
            var p = patch
            if p.priority == nil && existing?.priority != 0 { p.priority = .some(nil) }
            let derived: Set<String> = [
                existing.map { "CREATED:" + utc($0.createdAt) }, existing?.completedAt.map { "COMPLETED:" + utc($0) },
            ].compactMap { $0 }.reduce(into: []) { $0.insert($1) }
            let keptBefore = Set(keptLines(of: existing).properties)
            let order = ["CREATED", "PRIORITY", "STATUS", "COMPLETED", "PERCENT-COMPLETE"]
            let kept = keptProperties.filter { !derived.contains($0.raw) || keptBefore.contains($0.raw) }
            // Each of these is written once (RFC 5545 allows no more), so only the first is kept.
            let sorted = order.compactMap { name in kept.first { $0.name == name } } + kept.filter { !order.contains($0.name) }
            let lines = sorted.map(\.raw) + keptComponents
            if !lines.isEmpty { p.meta![keptKey] = lines.joined(separator: "\n") }
            return p
        }
    }

    /// The tasks of an iCalendar file: one per UID of its VTODOs.
    package static func entries(of text: String) throws(InterchangeError) -> [Entry] {
        let top = try ICalendarComponent.parse(text)
        guard !top.isEmpty else { throw InterchangeError.task(0, "the file holds no BEGIN:VCALENDAR") }
        var out: [Entry] = []
        for calendar in top {
            guard calendar.name == "VCALENDAR" else { throw InterchangeError.task(0, "expected VCALENDAR, found \(calendar.name)") }
            out += try entries(of: calendar, numberedFrom: out.count + 1)
        }
        return out
    }

    /// The tasks of one VCALENDAR (a CalDAV resource holds exactly one UID).
    package static func entries(of calendar: ICalendarComponent, numberedFrom first: Int = 1) throws(InterchangeError) -> [Entry] {
        var zones: [String: ICalendarTimeZone] = [:]
        var zoneText: [String: String] = [:]
        for c in calendar.components where c.name == "VTIMEZONE" {
            guard let zone = ICalendarTimeZone(c) else { throw InterchangeError.task(0, "a VTIMEZONE lacks its TZID or an observance's offsets") }
            zones[zone.id] = zone
            zoneText[zone.id] = c.lines.joined(separator: "\n")
        }
        var order: [String] = []
        var byUID: [String: [ICalendarComponent]] = [:]
        for (i, todo) in calendar.components.filter({ $0.name == "VTODO" }).enumerated() {
            guard let uid = todo.property("UID").map({ ICalendarText.text($0.value) }), !uid.isEmpty else {
                throw InterchangeError.task(first + i, "the VTODO has no UID")
            }
            if byUID[uid] == nil { order.append(uid) }
            byUID[uid, default: []].append(todo)
        }
        var out: [Entry] = []
        for (i, uid) in order.enumerated() {
            let group = byUID[uid]!
            let masterIndex = group.firstIndex { $0.property("RECURRENCE-ID") == nil } ?? 0
            let master = group[masterIndex]
            // By position: an override may read exactly like its master.
            let overrides = group.indices.filter { $0 != masterIndex }.map { group[$0] }
            do {
                out.append(try entry(master, uid: uid, overrides: overrides, zones: zones, zoneText: zoneText))
            } catch {
                throw InterchangeError.task(first + i, error.reason)
            }
        }
        return out
    }

    /// The patch a VTODO starts from: each field it describes whole, empty.
    private static func emptyPatch(uid: String) -> TaskPatch {
        var patch = TaskPatch(id: TaskID(uid) ?? derivedID(uid: uid))
        patch.title = ""
        patch.notes = .some(nil)
        patch.due = .some(nil)
        patch.done = false
        patch.tags = []
        patch.dependencies = []
        return patch
    }

    private static func entry(
        _ todo: ICalendarComponent, uid: String, overrides: [ICalendarComponent], zones: [String: ICalendarTimeZone], zoneText: [String: String]
    ) throws(InterchangeError) -> Entry {
        var patch = emptyPatch(uid: uid)
        var meta: [String: String] = [:]
        if TaskID(uid) == nil { meta[uidKey] = uid }
        var kept: [ContentLine] = []
        var tags = Set<String>()
        var seen = Set<String>()
        var planning = PlanningRead()
        for p in todo.properties where !planning.read(p, zones: zones) {
            // RFC 5545 allows each of these once, and the export writes one: a repeat is ignored.
            if ["PRIORITY", "STATUS", "COMPLETED", "CREATED", "PERCENT-COMPLETE"].contains(p.name) && !seen.insert(p.name).inserted { continue }
            switch p.name {
            case "UID", "DTSTAMP", "LAST-MODIFIED": break
            case "SUMMARY": patch.title = ICalendarText.text(p.value)
            case "DESCRIPTION": patch.notes = .some(ICalendarText.text(p.value))
            case "DUE":
                patch.due = .some(try ICalendarTime.due(p, zones: zones))
            case "PRIORITY":
                guard let v = Int(p.value.filter { $0 != " " }), (0...9).contains(v) else {
                    throw InterchangeError.task(0, "PRIORITY:\(p.value) is not 0 to 9")
                }
                patch.priority = .some(priority(v))
                // A value such as 2 is kept, so it reads back as written while its level stands.
                if v > 0 && icalPriority(priority(v) ?? 0) != v { kept.append(p) }
            case "STATUS":
                patch.done = p.value.uppercased() == "COMPLETED"
                if !["COMPLETED", "NEEDS-ACTION"].contains(p.value.uppercased()) { kept.append(p) }
            case "COMPLETED":
                patch.done = true
                kept.append(p)
            case "PERCENT-COMPLETE" where p.value == "100": break
            case "CATEGORIES": tags.formUnion(ICalendarText.textList(p.value).filter { !$0.isEmpty })
            case "X-TASKLOG-LIST": patch.list = .some(ICalendarText.text(p.value))
            case "X-TASKLOG-META":
                guard let key = p.parameter("KEY") else { throw InterchangeError.task(0, "X-TASKLOG-META has no KEY parameter") }
                // Keys under `ical.` are this mapping's own: another writer's are kept as written.
                if caretDecoded(key).hasPrefix(metaPrefix) { kept.append(p) } else { meta[caretDecoded(key)] = ICalendarText.text(p.value) }
            default: kept.append(p)
            }
        }
        if todo.property("STATUS")?.value.uppercased() == "NEEDS-ACTION" { patch.done = false }
        // The export writes these from the task's state: kept ones would not read back.
        kept.removeAll { patch.done == true ? ["STATUS", "PERCENT-COMPLETE"].contains($0.name) : $0.name == "COMPLETED" }
        patch.tags = tags.sorted()
        patch.dependencies = planning.dependencies
        meta.merge(planning.registers) { _, register in register }
        if !overrides.isEmpty { meta[overridesKey] = overrides.flatMap(\.lines).joined(separator: "\n") }
        // The task's own DUE is stored as an instant; kept lines and overrides keep their zones.
        let keptProperties = kept + overrides.flatMap(\.properties)
        let referenced = Set(keptProperties.compactMap { $0.parameter("TZID") })
        let zonesKept = referenced.sorted().compactMap { zoneText[$0] }
        if !zonesKept.isEmpty { meta[zonesKey] = zonesKept.joined(separator: "\n") }
        patch.meta = meta
        return Entry(patch: patch, uid: uid, keptProperties: kept, keptComponents: todo.components.flatMap(\.lines))
    }
}
