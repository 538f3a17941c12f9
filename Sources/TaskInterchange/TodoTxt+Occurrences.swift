@_spi(Engine) import TaskModel

extension TodoTxt {
    /// The lines with a recurrence tool's copy made a next occurrence. Such a tool (the
    /// `dorecur` add-on) marks a recurring line done and appends a copy, same `uuid:`, with
    /// the next dates. The copy takes the id of the occurrence completing the done line makes
    /// (Spec/crdt.md, "Recurring tasks"), so the import makes no second one and keeps the
    /// copy's dates. `existing` gives the store's tasks by id; `today` (local days) stands in
    /// for a due date the done line lacks.
    static func separatingOccurrences(_ lines: [Line], existing: [TaskID: TaskItem], today: Int64?) -> [Line] {
        var byID: [TaskID: [Int]] = [:]
        for (i, line) in lines.enumerated() { if let id = line.patch.id { byID[id, default: []].append(i) } }
        var out = lines
        for (id, indices) in byID where indices.count == 2 {
            let (first, second) = (lines[indices[0]], lines[indices[1]])
            guard first.patch.done != second.patch.done else { continue }
            let (doneLine, copy) = first.patch.done == true ? (first, indices[1]) : (second, indices[0])
            guard let rule = doneLine.planning[PlanningKey.recur].flatMap(RecurrenceRule.init),
                out[copy].planning[PlanningKey.recur] != nil,
                let after = (doneLine.patch.due ?? existing[id]?.due) ?? today.map({ Due.date(days: $0) })
            else { continue }
            let series = existing[id]?.meta[PlanningKey.series] ?? id.rawValue
            out[copy].patch.id = RecurrenceRule.occurrenceID(series: series, due: rule.next(after: after))
            out[copy].planning[PlanningKey.series] = series
        }
        return out
    }
}
