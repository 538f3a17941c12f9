@_spi(Engine) import TaskModel

/// The planning registers as Taskwarrior attributes (Spec/interop.md, "Taskwarrior"): `wait`,
/// `scheduled` and `start` as times, `recur` as a duration, `depends` as the dependencies.
/// Taskwarrior has no subtasks: a parent depends on its children, and each child names its
/// parent in `tasklogparent`.
extension TaskwarriorJSON {
    static let parentAttribute = "tasklogparent"
    static let seriesAttribute = "tasklogseries"
    static let timeRegisters = [PlanningKey.wait, PlanningKey.scheduled, PlanningKey.start]
    /// The attributes this file reads and writes as registers, never kept as meta.
    static let planningAttributes: Set<String> = Set(timeRegisters + ["recur", "depends", parentAttribute, seriesAttribute])
    /// The meta keys import states for every task: the registers Taskwarrior expresses.
    static let expressedRegisters: Set<String> = Set(timeRegisters + [PlanningKey.recur, PlanningKey.parent, PlanningKey.series])

    /// Writes `t`'s registers; `children` are the uuids of its subtasks, which it depends on.
    static func writePlanning(_ t: TaskItem, children: [String], _ w: inout JSONWriter) {
        let depends = t.dependencies.map(uuidText) + children
        if !depends.isEmpty {
            w.raw(",\"depends\":[")
            for (i, d) in depends.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(d)
            }
            w.raw("]")
        }
        let times = [t.waitUntil, t.scheduled, t.startedAt]
        for (name, time) in zip(timeRegisters, times) { if let time { pair(name, dueText(time), &w) } }
        if let recur = recurText(t) { pair("recur", recur, &w) }
        if let parent = t.parent { pair(parentAttribute, uuidText(parent), &w) }
        // A Taskwarrior occurrence's series is its template, which `parent` names already.
        if let series = t.meta[PlanningKey.series], series != t.meta[metaPrefix + "parent"] { pair(seriesAttribute, series, &w) }
    }

    /// The `recur` to write: the text Taskwarrior gave while it still states the task's rule,
    /// else the rule's own duration; the kept text for a rule no register holds.
    static func recurText(_ t: TaskItem) -> String? {
        let kept = t.meta[metaPrefix + "recur"]
        guard let rule = t.recurrence else { return kept }
        if let kept, recurrence(kept) == rule { return kept }
        return durationText(rule)
    }

    /// A rule as a Taskwarrior duration: `weekly`, `2w`, `3mo`.
    package static func durationText(_ rule: RecurrenceRule) -> String {
        let (one, unit) = switch rule.unit {
        case .days: ("daily", "d")
        case .weeks: ("weekly", "w")
        case .months: ("monthly", "mo")
        case .years: ("yearly", "y")
        }
        return rule.count == 1 ? one : "\(rule.count)\(unit)"
    }

    /// The rule a Taskwarrior duration states (`weekly`, `2w`, `3 months`, `biweekly`), or
    /// nil for one no rule holds (`weekdays`, hours, a fraction).
    package static func recurrence(_ text: String) -> RecurrenceRule? {
        let named: [String: (Int, RecurrenceRule.Unit)] = [
            "daily": (1, .days), "weekly": (1, .weeks), "monthly": (1, .months), "yearly": (1, .years), "annual": (1, .years),
            "biweekly": (2, .weeks), "fortnight": (2, .weeks), "bimonthly": (2, .months), "quarterly": (3, .months),
            "semiannual": (6, .months),
        ]
        let units: [String: RecurrenceRule.Unit] = [
            "d": .days, "day": .days, "days": .days, "w": .weeks, "wk": .weeks, "wks": .weeks, "week": .weeks,
            "weeks": .weeks, "m": .months, "mo": .months, "mos": .months, "mth": .months, "mths": .months,
            "mnths": .months, "month": .months, "months": .months, "y": .years, "yr": .years, "yrs": .years,
            "year": .years, "years": .years, "q": .months, "qtr": .months, "quarter": .months, "quarters": .months,
        ]
        let lower = text.lowercased()
        if let (n, unit) = named[lower] { return RecurrenceRule(count: n, unit: unit) }
        let digits = lower.prefix { $0.isASCII && $0.isNumber }
        let name = lower.dropFirst(digits.count).drop { $0 == " " }
        guard let unit = units[String(name)], digits.count <= 4 else { return nil }
        let count = (digits.isEmpty ? 1 : Int(digits)!) * (["q", "qtr", "quarter", "quarters"].contains(name) ? 3 : 1)
        return RecurrenceRule(count: count, unit: unit)
    }

    /// The registers an entry `m` states, as meta; a time that does not read is refused.
    static func planningMeta(_ m: [String: JSONValue], number: Int) throws(InterchangeError) -> [String: String] {
        func text(_ key: String) -> String? { if case .string(let s)? = m[key] { s } else { nil } }
        var meta: [String: String] = [:]
        for name in timeRegisters {
            guard let value = text(name) else { continue }
            guard let time = due(value) else { throw .task(number, "\(name) \(value) is not a Taskwarrior time") }
            meta[name] = time.description
        }
        if let recur = text("recur") {
            if let rule = recurrence(recur) { meta[PlanningKey.recur] = rule.text }
            // Kept while it differs from how export writes the rule, or when no rule holds it.
            if recurrence(recur).map({ durationText($0) != recur }) ?? true { meta[metaPrefix + "recur"] = recur }
        }
        meta[PlanningKey.parent] = text(parentAttribute).flatMap(TaskID.init)?.rawValue
        // A Taskwarrior occurrence belongs to the series of its template (`parent`).
        meta[PlanningKey.series] = text(seriesAttribute) ?? (meta[PlanningKey.recur] == nil ? nil : text("parent"))
        if text("status") == "recurring" { meta[metaPrefix + "status"] = "recurring" }
        return meta
    }

    /// The uuids `depends` names: a JSON array (Taskwarrior 2.6) or comma-separated text.
    package static func dependsUUIDs(_ value: JSONValue?) -> [String] {
        switch value {
        case .array(let items)?: items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        case .string(let s)?: s.split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty }
        default: []
        }
    }
}
