import CRDTCore
@_spi(Engine) import TaskModel

/// How urgent an open task is (Spec/cli.md, "Urgency"): the order of `top`, of the widget
/// view and of the rest in `today`. The score adds a due term, a priority term, a bonus for
/// work in progress and one for a task scheduled by today, and puts blocked tasks last.
public enum Urgency {
    /// The score of `task` at `now` (milliseconds) and `today` (the local date, in days), or
    /// nil when it is not ranked: done, or waiting (its wait is after now).
    /// `isOpen` says whether a task it depends on is still open (a live task not done).
    public static func score(_ task: TaskItem, now: Int64, today: Int64, isOpen: (TaskID) -> Bool) -> Double? {
        guard !task.isDone else { return nil }
        let facts = UrgencyFacts(task)
        guard let base = facts.score(now: now, today: today) else { return nil }
        return facts.dependencies.contains(where: isOpen) ? base + blockedTerm : base
    }

    /// The open tasks of `tasks` that are ranked, most urgent first (``score(_:now:today:isOpen:)``,
    /// a dependency open when it is among `tasks` and not done); ties go to the sooner due, then
    /// the created order.
    public static func ranked(_ tasks: [TaskItem], now: Int64, today: Int64) -> [TaskItem] {
        var ranking = UrgencyRanking(now: now, today: today)
        for t in tasks where !t.isDone { ranking.take(UrgencyFacts(t), item: t) }
        return ranking.ordered(limit: .max).compactMap(\.item)
    }

    /// Added for a task whose due has passed: above every task that is not overdue.
    static let overdueBase = 30.0
    /// Added for each day late, up to ``overdueDays``.
    static let overdueDays = 10.0
    /// The due term for a task due today; it falls linearly to ``dueFar`` four weeks on.
    static let dueToday = 12.0
    static let dueFar = 2.0
    static let dueHorizonDays = 28.0
    /// By priority 0 to 3.
    static let priorityTerms: [Double] = [0, 2, 4, 6]
    static let inProgressTerm = 4.0
    static let scheduledTerm = 3.0
    /// Puts a blocked task after every task that is not.
    static let blockedTerm = -100.0
    static let dayMilliseconds = 86_400_000.0

    /// The due term: overdue tasks above all others, the rest by how soon they are due.
    static func dueTerm(_ due: Due?, now: Int64, today: Int64) -> Double {
        guard let due else { return 0 }
        // In floating point: a due from another device may be any date, far past the year 9999.
        let daysAhead: Double = switch due {
        case .date(let d): Double(d) - Double(today)
        case .instant(let ms): (Double(ms) - Double(now)) / dayMilliseconds
        }
        if due.isOverdue(now: now, today: today) {
            return overdueBase + min(max(-daysAhead, 0), overdueDays)
        }
        return dueToday - (dueToday - dueFar) * min(max(daysAhead, 0), dueHorizonDays) / dueHorizonDays
    }
}

/// What the score reads of a task, from an item or from a saved task read in place.
struct UrgencyFacts {
    var id: TaskID
    var created: Timestamp
    var priority: UInt8?
    var due: Due?
    var wait: Due?
    var scheduled: Due?
    var inProgress: Bool
    var dependencies: [TaskID]

    /// What the urgency plan keeps of the task.
    var planFacts: PlanFacts { PlanFacts(priority: priority, due: due, scheduled: scheduled, inProgress: inProgress) }

    init(_ t: TaskItem) {
        (id, created, priority, due) = (t.id, t.createdAt, t.priority, t.due)
        (wait, scheduled, inProgress, dependencies) = (t.waitUntil, t.scheduled, t.startedAt != nil, t.dependencies)
    }

    /// The facts that bound the score of every task of a plan list whose due is `due` or
    /// later: its class's priority and progress, and a scheduled date always reached when the
    /// class is scheduled (``PlanFacts/rankClass``).
    init(bounding due: Due?, rankClass: UInt8) {
        (id, created, priority, self.due) = (TaskID(uuidHigh: 0, low: 0), .zero, rankClass & 3, due)
        (wait, inProgress, dependencies) = (nil, rankClass & 4 != 0, [])
        scheduled = rankClass & 8 != 0 ? .date(days: .min) : nil
    }

    init(_ t: borrowing SavedTask) {
        (id, created, priority, due) = (t.id, t.savedCreatedAt, t.savedPriority, t.savedDue)
        wait = t.savedDue(meta: PlanningKey.wait)
        scheduled = t.savedDue(meta: PlanningKey.scheduled)
        inProgress = t.savedDue(meta: PlanningKey.start) != nil
        dependencies = t.savedDependencies
    }

    /// Whether the task is waiting at `now`: its wait date is after today, or its wait instant
    /// after now.
    func isWaiting(now: Int64, today: Int64) -> Bool { wait?.isAhead(now: now, today: today) ?? false }

    /// Whether its scheduled date or time has come: a date today or earlier, an instant now or earlier.
    func isScheduledBy(now: Int64, today: Int64) -> Bool {
        switch scheduled {
        case .date(let d): d <= today
        case .instant(let ms): ms <= now
        case nil: false
        }
    }

    /// The score before the blocked term; nil while waiting.
    func score(now: Int64, today: Int64) -> Double? {
        guard !isWaiting(now: now, today: today) else { return nil }
        var s = Urgency.dueTerm(due, now: now, today: today)
        s += Urgency.priorityTerms[Int(min(priority ?? 0, 3))]
        if inProgress { s += Urgency.inProgressTerm }
        if isScheduledBy(now: now, today: today) { s += Urgency.scheduledTerm }
        return s
    }
}
