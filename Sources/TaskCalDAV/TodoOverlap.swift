/// The times of a VTODO that decide whether it overlaps a time range, and the table of
/// RFC 4791 section 9.9 over them. All in seconds since 1970; any year works. A DUE that is
/// a DATE counts as the end of its day, so a day's range finds the tasks due that day.
struct TodoOverlap {
    var start: Int64?
    var duration: Int64?
    var due: Int64?
    var completed: Int64?
    var created: Int64?

    init(_ todo: CalendarComponent) {
        start = todo.instant("DTSTART")
        duration = todo.duration
        due = todo.instant("DUE", dateEndsDay: true)
        completed = todo.instant("COMPLETED")
        created = todo.instant("CREATED")
    }

    /// Whether the VTODO or one of its RRULE's instances overlaps [s, e) (open ends already
    /// widened to the extremes). An instance moves DTSTART and DUE; COMPLETED and CREATED stay.
    func overlaps(start s: Int64, end e: Int64, rule: TodoRecurrence?) -> Bool {
        if overlaps(start: s, end: e) { return true }
        guard let rule, let anchor = start ?? due else { return false }
        guard rule.exact else { return anchor <= e && (rule.until ?? .max) >= s }
        let length = max(0, (due ?? anchor) - anchor, duration ?? 0)
        let first = s == .min ? anchor : s - length
        return rule.offsets(from: anchor, reaching: first, through: e).contains { shifted(by: $0).overlaps(start: s, end: e) }
    }

    func shifted(by offset: Int64) -> TodoOverlap {
        var moved = self
        moved.start = start.map { $0 + offset }
        moved.due = due.map { $0 + offset }
        return moved
    }

    /// Whether this one instance overlaps [s, e) (open ends already widened to the extremes).
    func overlaps(start s: Int64, end e: Int64) -> Bool {
        if let start, let duration, due == nil {
            return s <= start + duration && (e > start || e >= start + duration)
        }
        if let start, let due { return (s < due || s <= start) && (e > start || e >= due) }
        if let start { return s <= start && e > start }
        if let due { return s < due && e >= due }
        switch (completed, created) {
        case let (c?, r?): return (s <= r || s <= c) && (e >= r || e >= c)
        case let (c?, nil): return s <= c && e >= c
        case let (nil, r?): return e > r
        case (nil, nil): return true
        }
    }
}
