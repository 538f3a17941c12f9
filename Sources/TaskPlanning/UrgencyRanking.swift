import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Open tasks gathered one at a time, ranked once every open task is known (a task is
/// blocked only if a task it depends on is among them).
struct UrgencyRanking {
    /// One ranked task: its score before the blocked term, what ties are broken by, and the
    /// item when it was at hand (a saved task read in place leaves it nil).
    struct Entry {
        var score: Double
        var dueKey: Int64
        var created: Timestamp
        var id: TaskID
        var dependencies: [TaskID]
        var section: TodayView.Section?
        var item: TaskItem?
    }

    let now: Int64
    let today: Int64
    /// The `today` section of a task, when the ranking is for `today`.
    var section: ((UrgencyFacts) -> TodayView.Section?)?
    private(set) var entries: [Entry] = []
    private var openIDs: [TaskID] = []

    init(now: Int64, today: Int64, section: ((UrgencyFacts) -> TodayView.Section?)? = nil) {
        (self.now, self.today, self.section) = (now, today, section)
    }

    /// Notes an open task, and ranks it unless it is waiting.
    mutating func take(_ facts: UrgencyFacts, item: TaskItem?) {
        openIDs.append(facts.id)
        guard let score = facts.score(now: now, today: today) else { return }
        entries.append(Entry(
            score: score, dueKey: facts.due?.sortKey ?? .max, created: facts.created, id: facts.id,
            dependencies: facts.dependencies, section: section?(facts), item: item))
    }

    /// The entries most urgent first, blocked ones scored down.
    func ordered() -> [Entry] {
        var ranked = entries
        let wanted = Set(ranked.flatMap(\.dependencies))
        if !wanted.isEmpty {
            let open = Set(openIDs.filter(wanted.contains))
            for i in ranked.indices where ranked[i].dependencies.contains(where: open.contains) {
                ranked[i].score += Urgency.blockedTerm
            }
        }
        ranked.sort(by: Self.precedes)
        return ranked
    }

    /// Higher score first, then the sooner due (none last), then the created order.
    static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        if a.score != b.score { return a.score > b.score }
        if a.dueKey != b.dueKey { return a.dueKey < b.dueKey }
        return a.created != b.created ? a.created < b.created : a.id < b.id
    }
}

/// Ranks the open tasks of a store as a listing reads them: a saved task in place, without
/// making it an item.
struct RankingSink: TaskSink {
    var ranking: UrgencyRanking

    mutating func take(_ task: TaskItem) {
        guard !task.isDone else { return }
        ranking.take(UrgencyFacts(task), item: task)
    }

    mutating func take(_ task: borrowing SavedTask) {
        guard !task.isDone else { return }
        ranking.take(UrgencyFacts(task), item: nil)
    }
}

extension UrgencyRanking {
    /// Every open task of `store`, ranked (a store read once need not load its state).
    static func of(_ store: TaskStore, now: Int64, today: Int64, section: ((UrgencyFacts) -> TodayView.Section?)? = nil) throws(StoreError) -> [Entry] {
        var sink = RankingSink(ranking: UrgencyRanking(now: now, today: today, section: section))
        try store.scanTasks(TaskQuery(status: .open), into: &sink)
        return sink.ranking.ordered()
    }

    /// The items of `entries`, in their order: those not at hand read from `store` (nil for
    /// one removed meanwhile).
    static func items(_ entries: some Collection<Entry>, in store: TaskStore) throws(StoreError) -> [TaskItem?] {
        let missing = Set(entries.filter { $0.item == nil }.map(\.id))
        let read = missing.isEmpty ? [:] : try store.liveTasks(missing)
        return entries.map { $0.item ?? read[$0.id] }
    }
}

extension Urgency {
    /// The `n` most urgent open tasks of `store` at `now` and `today` (the local date, in
    /// days): the order of `top` and of the widget view.
    public static func top(_ n: Int, in store: TaskStore, now: Int64, today: Int64) throws(StoreError) -> [TaskItem] {
        let ranked = try UrgencyRanking.of(store, now: now, today: today)
        return try UrgencyRanking.items(ranked.prefix(max(0, n)), in: store).compactMap { $0 }
    }
}
