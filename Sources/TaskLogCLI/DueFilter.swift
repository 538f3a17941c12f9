@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// `list --overdue`, `--due-before D` and `--due-after D`: which due dates a listing keeps.
/// A date counts as its whole local day: before D means before D's first moment, after D
/// after its last.
struct DueFilter {
    var overdue = false
    var before: Int64?
    var after: Int64?
    let now: Int64
    let zone: LocalZone

    /// The filter the options ask for, or nil when they ask for none.
    init?(_ context: Context) throws(UsageError) {
        now = Int64(Posix.wallClockMilliseconds())
        zone = LocalZone()
        overdue = context.arguments.has("overdue")
        let (before, after) = (try context.date("due-before"), try context.date("due-after"))
        guard overdue || before != nil || after != nil else { return nil }
        self.before = before.map { start(of: $0) }
        self.after = after.map { end(of: $0) }
    }

    func admits(_ t: TaskItem) -> Bool {
        guard let due = t.due else { return false }
        if overdue && !due.isOverdue(now: now, today: zone.civil(milliseconds: now).days) { return false }
        if let before, end(of: due) > before { return false }
        if let after, start(of: due) < after { return false }
        return true
    }

    /// The first millisecond a due covers: a date's local midnight, or the instant.
    private func start(of due: Due) -> Int64 {
        switch due {
        case .date(let d): zone.instant(days: d, hour: 0, minute: 0)
        case .instant(let ms): ms
        }
    }

    /// The first millisecond after a due: the next local midnight, or the instant plus one.
    private func end(of due: Due) -> Int64 {
        switch due {
        case .date(let d): zone.instant(days: d + 1, hour: 0, minute: 0)
        case .instant(let ms): ms + 1
        }
    }
}
