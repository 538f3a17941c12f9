@_spi(Engine) import TaskModel

/// The planning registers as todo.txt pairs (Spec/interop.md, "todo.txt"): `rec:` as the
/// recurrence add-on writes it, `parent:` for the parent, and the threshold `t:` for wait.
extension TodoTxt {
    /// The registers a line states; import sets or clears each of them.
    static let expressedRegisters: Set<String> = [PlanningKey.recur, PlanningKey.parent, PlanningKey.wait]
    static let recKey = metaPrefix + "rec"

    /// The pairs that state `t`'s registers.
    static func planningPairs(_ t: TaskItem) -> [String] {
        var pairs: [String] = []
        if let wait = t.waitUntil { pairs.append("t:" + wait.description) }
        if let rec = recText(t) { pairs.append("rec:" + escaped(rec)) }
        if let parent = t.parent { pairs.append("parent:" + escaped(parent.rawValue)) }
        return pairs
    }

    /// The `rec:` value to write: the one the line gave while it still states the task's rule,
    /// else the rule's own (`+` when the task has a due date, since the next one is counted
    /// from it); a kept value no rule holds, such as business days, as it was.
    static func recText(_ t: TaskItem) -> String? {
        let kept = t.meta[recKey]
        guard let rule = t.recurrence else { return kept }
        if let kept, recurrence(kept) == rule { return kept }
        return canonicalRec(rule, strict: t.due != nil)
    }

    package static func canonicalRec(_ rule: RecurrenceRule, strict: Bool) -> String {
        let unit = switch rule.unit {
        case .days: "d"
        case .weeks: "w"
        case .months: "m"
        case .years: "y"
        }
        return (strict ? "+" : "") + "\(rule.count)" + unit
    }

    /// The rule a `rec:` value states (`1w`, `+1m`, `2d`, `3` for days); nil for business
    /// days (`b`) or anything else no rule holds.
    package static func recurrence(_ value: String) -> RecurrenceRule? {
        var s = Substring(value)
        if s.first == "+" { s = s.dropFirst() }
        let digits = s.prefix { $0.isASCII && $0.isNumber }
        let rest = s.dropFirst(digits.count)
        guard !digits.isEmpty, digits.count <= 4, rest.count <= 1 else { return nil }
        let units: [Substring: RecurrenceRule.Unit] = ["": .days, "d": .days, "w": .weeks, "m": .months, "y": .years]
        return units[rest].flatMap { RecurrenceRule(count: Int(digits)!, unit: $0) }
    }

    /// Reads a pair that states a register into `meta`; false for any other pair, or one whose
    /// value no register holds (it is then kept as an unknown pair).
    static func readPlanning(_ key: Substring, _ value: String, due: Due?, into meta: inout [String: String]) -> Bool {
        switch key {
        case "t":
            guard let wait = Due(parsing: value) else { return false }
            meta[PlanningKey.wait] = wait.description
        case "parent":
            guard let parent = TaskID(value) else { return false }
            meta[PlanningKey.parent] = parent.rawValue
        case "rec":
            guard let rule = recurrence(value) else { return false }
            meta[PlanningKey.recur] = rule.text
            if canonicalRec(rule, strict: due != nil) != value { meta[recKey] = value }
        default: return false
        }
        return true
    }
}
