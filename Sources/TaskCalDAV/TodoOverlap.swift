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

    /// Whether the VTODO overlaps [s, e) (open ends already widened to the extremes).
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
