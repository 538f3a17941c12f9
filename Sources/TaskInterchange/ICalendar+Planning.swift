@_spi(Engine) import TaskModel

/// The planning registers as VTODO properties (Spec/interop.md, "iCalendar"): RRULE for the
/// recurrence, RELATED-TO for the parent and dependencies (RFC 9253), DTSTART for the scheduled
/// time, and X-TASKLOG-WAIT and X-TASKLOG-START where RFC 5545 has no property.
extension ICalendar {
    /// The registers written as their own properties; any other (`series`) travels as X-TASKLOG-META.
    static let propertyRegisters: Set<String> = [
        PlanningKey.parent, PlanningKey.wait, PlanningKey.scheduled, PlanningKey.start, PlanningKey.recur,
    ]
    static let waitProperty = "X-TASKLOG-WAIT"
    static let startProperty = "X-TASKLOG-START"

    /// The properties that state `t`'s registers and dependencies.
    static func planningLines(_ t: TaskItem, kept: [ContentLine]) -> [String] {
        var lines: [String] = []
        let keptLinks = Set(kept.compactMap(relation).map { "\($0.type) \($0.id.rawValue)" })
        if let parent = t.parent, !keptLinks.contains("PARENT \(parent.rawValue)") { lines.append(related(parent, "PARENT")) }
        lines += t.dependencies.filter { !keptLinks.contains("DEPENDS-ON \($0.rawValue)") }.map { related($0, "DEPENDS-ON") }
        if let s = t.scheduled { lines.append(timeLine("DTSTART", s)) }
        if let w = t.waitUntil { lines.append(timeLine(waitProperty, w)) }
        if let s = t.startedAt { lines.append(timeLine(startProperty, s)) }
        if let r = t.recurrence, !kept.contains(where: { $0.name == "RRULE" && rule(fromRRULE: $0.value) == r }) {
            lines.append("RRULE:" + rrule(r))
        }
        return lines
    }

    /// Whether a kept property is still written beside `t`'s registers: a kept RRULE that a
    /// rule can hold only while it states the task's rule (so `INTERVAL=1` reads back as
    /// written), one no rule holds always; a kept DTSTART only while the task has no scheduled time.
    static func stillKept(_ p: ContentLine, beside t: TaskItem) -> Bool {
        switch p.name {
        case "RRULE": rule(fromRRULE: p.value).map { $0 == t.recurrence } ?? true
        case "DTSTART": t.scheduled == nil
        case "RELATED-TO":
            switch relation(p) {
            case ("PARENT", let id)?: id == t.parent
            case ("DEPENDS-ON", let id)?: t.dependencies.contains(id)
            default: true
            }
        default: true
        }
    }

    /// The relation type (PARENT when none is given, RFC 5545) and the task a RELATED-TO names.
    static func relation(_ p: ContentLine) -> (type: String, id: TaskID)? {
        guard p.name == "RELATED-TO" else { return nil }
        let uid = ICalendarText.text(p.value)
        return (p.parameter("RELTYPE")?.uppercased() ?? "PARENT", TaskID(uid) ?? derivedID(uid: uid))
    }

    private static func related(_ id: TaskID, _ type: String) -> String {
        ContentLine("RELATED-TO", ICalendarText.escaped(id.rawValue), parameters: [.init(name: "RELTYPE", value: type)]).raw
    }

    private static func timeLine(_ name: String, _ time: Due) -> String {
        switch time {
        case .date(let d): "\(name);VALUE=DATE:" + ICalendarTime.dateText(days: d)
        case .instant(let ms): "\(name):" + ICalendarTime.utcText(milliseconds: ms)
        }
    }

    /// A rule as an RRULE value: `FREQ=WEEKLY;INTERVAL=2`, no INTERVAL when it is 1.
    package static func rrule(_ r: RecurrenceRule) -> String {
        let freq = switch r.unit {
        case .days: "DAILY"
        case .weeks: "WEEKLY"
        case .months: "MONTHLY"
        case .years: "YEARLY"
        }
        return "FREQ=" + freq + (r.count == 1 ? "" : ";INTERVAL=\(r.count)")
    }

    /// The rule an RRULE value states, if it holds only FREQ (daily to yearly) and INTERVAL;
    /// nil for any other part (BYDAY, COUNT, UNTIL, ...), which no rule here can hold.
    package static func rule(fromRRULE value: String) -> RecurrenceRule? {
        var freq: RecurrenceRule.Unit?
        var interval = 1
        for part in value.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.uppercased() }
            guard pair.count == 2 else { return nil }
            switch pair[0] {
            case "FREQ" where freq == nil:
                freq = ["DAILY": .days, "WEEKLY": .weeks, "MONTHLY": .months, "YEARLY": .years][pair[1]]
                if freq == nil { return nil }
            case "INTERVAL":
                guard let n = Int(pair[1]) else { return nil }
                interval = n
            default: return nil
            }
        }
        return freq.flatMap { RecurrenceRule(count: interval, unit: $0) }
    }

    /// The registers and dependencies a VTODO's properties state.
    struct PlanningRead {
        var registers: [String: String] = [:]
        var dependencies: [TaskID] = []

        /// Reads `p` if it states a register; false, reading nothing, if it does not or if its
        /// value is one no register can hold (it is then kept as written).
        mutating func read(_ p: ContentLine, zones: [String: ICalendarTimeZone]) -> Bool {
            switch p.name {
            case "RRULE" where registers[PlanningKey.recur] == nil:
                guard let rule = rule(fromRRULE: p.value) else { return false }
                registers[PlanningKey.recur] = rule.text
                // Written otherwise than export writes it (`INTERVAL=1`): kept, to read back as it was.
                return rrule(rule) == p.value
            case "RELATED-TO":
                // A UID that is not a task id is kept as written too, so other apps read it back.
                let foreign = TaskID(ICalendarText.text(p.value)) == nil
                switch relation(p) {
                case ("PARENT", let id)?: return set(PlanningKey.parent, id.rawValue) && !foreign
                case ("DEPENDS-ON", let id)?:
                    dependencies.append(id)
                    return !foreign
                default: return false
                }
            case "DTSTART": return set(PlanningKey.scheduled, (try? ICalendarTime.due(p, zones: zones))?.description)
            case ICalendar.waitProperty: return set(PlanningKey.wait, (try? ICalendarTime.due(p, zones: zones))?.description)
            case ICalendar.startProperty: return set(PlanningKey.start, (try? ICalendarTime.due(p, zones: zones))?.description)
            default: return false
            }
        }

        private mutating func set(_ key: String, _ value: String?) -> Bool {
            guard let value, registers[key] == nil else { return false }
            registers[key] = value
            return true
        }
    }
}
