import CRDTCore
@_spi(Engine) import TaskModel
import TaskStore

/// What to do today (Spec/cli.md, "Today"): the open tasks that are overdue, due today,
/// scheduled for today or earlier, or in progress, each in the first of these sections that
/// holds it; then the most urgent of the rest. Waiting tasks are left out; each section is in
/// urgency order (``Urgency``).
public struct TodayView: Sendable, Equatable {
    public enum Section: String, Sendable, CaseIterable {
        case overdue, dueToday = "due_today", scheduled, inProgress = "in_progress", next
    }

    public var overdue: [TaskItem] = []
    public var dueToday: [TaskItem] = []
    public var scheduled: [TaskItem] = []
    public var inProgress: [TaskItem] = []
    /// The most urgent open tasks in none of the sections above.
    public var next: [TaskItem] = []

    /// The tasks of one section.
    public subscript(section: Section) -> [TaskItem] {
        switch section {
        case .overdue: overdue
        case .dueToday: dueToday
        case .scheduled: scheduled
        case .inProgress: inProgress
        case .next: next
        }
    }

    /// No task in any section.
    public init() {}

    /// The view of `store` now in the local time zone, with at most `n` tasks in ``next``.
    public init(_ store: TaskStore, next n: Int = 5) throws(StoreError) {
        try self.init(store, next: n, now: Int64(Posix.wallClockMilliseconds()), zone: LocalZone())
    }

    /// The view of `store` at `now` in `zone`.
    package init(_ store: TaskStore, next n: Int, now: Int64, zone: some CivilZone) throws(StoreError) {
        if let planned = try Self.throughPlan(store, next: n, now: now, zone: zone) {
            self = planned
            return
        }
        try self.init(everyTaskOf: store, next: n, now: now, zone: zone)
    }

    /// The view of `store` at `now` in `zone`, by reading every open task.
    init(everyTaskOf store: TaskStore, next n: Int, now: Int64, zone: some CivilZone) throws(StoreError) {
        let today = zone.civil(milliseconds: now).days
        let ranked = try UrgencyRanking.of(store, now: now, today: today, limit: max(0, n)) { facts in
            Self.section(of: facts, now: now, today: today) { zone.civil(milliseconds: $0).days }
        }
        for (entry, item) in zip(ranked, try UrgencyRanking.items(ranked, in: store)) {
            if let item { append(item, to: entry.section ?? .next) }
        }
    }

    /// Sets the tasks of one section.
    mutating func set(_ items: [TaskItem], for section: Section) {
        switch section {
        case .overdue: overdue = items
        case .dueToday: dueToday = items
        case .scheduled: scheduled = items
        case .inProgress: inProgress = items
        case .next: next = items
        }
    }

    mutating func append(_ item: TaskItem, to section: Section) {
        switch section {
        case .overdue: overdue.append(item)
        case .dueToday: dueToday.append(item)
        case .scheduled: scheduled.append(item)
        case .inProgress: inProgress.append(item)
        case .next: next.append(item)
        }
    }

    /// The first section that holds a task, or nil for the rest; `dayOf` gives an instant's
    /// local date.
    static func section(of t: UrgencyFacts, now: Int64, today: Int64, dayOf: (Int64) -> Int64) -> Section? {
        if let due = t.due {
            if due.isOverdue(now: now, today: today) { return .overdue }
            if day(due, dayOf) == today { return .dueToday }
        }
        if let s = t.scheduled, day(s, dayOf) <= today { return .scheduled }
        return t.inProgress ? .inProgress : nil
    }

    private static func day(_ due: Due, _ dayOf: (Int64) -> Int64) -> Int64 {
        switch due {
        case .date(let d): d
        case .instant(let ms): dayOf(ms)
        }
    }
}
