import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Open tasks gathered one at a time, ranked once every open task is known (a task is
/// blocked only if a task it depends on is among them). Sorting moves small keys only: ids,
/// items and dependencies stay in arrays beside them.
struct UrgencyRanking {
    /// What ranks a task: its score, then due, then created order; `index` finds the rest.
    struct Key {
        var score: Double
        var dueKey: Int64
        var created: Timestamp
        var index: Int32
    }

    /// A ranked task: its id, its `today` section, and its item when it was at hand (a saved
    /// task read in place leaves it nil).
    struct Entry {
        var id: TaskID
        var section: TodayView.Section?
        var item: TaskItem?
    }

    let now: Int64
    let today: Int64
    /// The `today` section of a task, when the ranking is for `today`.
    let section: ((UrgencyFacts) -> TodayView.Section?)?
    private var keys: [Key] = []
    private var ids: [TaskID] = []
    private var sections: [TodayView.Section?] = []
    private var items: [Int32: TaskItem] = [:]
    private var dependencies: [Int32: [TaskID]] = [:]
    /// Open tasks not ranked (waiting): they still block the tasks that depend on them.
    private var waitingIDs: [TaskID] = []

    init(now: Int64, today: Int64, section: ((UrgencyFacts) -> TodayView.Section?)? = nil) {
        (self.now, self.today, self.section) = (now, today, section)
    }

    /// Notes an open task, and ranks it unless it is waiting.
    mutating func take(_ facts: UrgencyFacts, item: TaskItem?) {
        guard let score = facts.score(now: now, today: today) else { return waitingIDs.append(facts.id) }
        let index = Int32(keys.count)
        keys.append(Key(score: score, dueKey: facts.due?.sortKey ?? .max, created: facts.created, index: index))
        ids.append(facts.id)
        if let section { sections.append(section(facts)) }
        if let item { items[index] = item }
        if !facts.dependencies.isEmpty { dependencies[index] = facts.dependencies }
    }

    /// The most urgent first, blocked ones scored down: every entry with a section, then at
    /// most `limit` without one.
    func ordered(limit: Int) -> [Entry] {
        var sectioned: [Key] = []
        var others: [Key] = []
        for key in scoredKeys() {
            if !sections.isEmpty, sections[Int(key.index)] != nil { sectioned.append(key) } else { others.append(key) }
        }
        sectioned.sort(by: precedes)
        return (sectioned + best(limit, of: others)).map { key in
            let i = Int(key.index)
            return Entry(id: ids[i], section: sections.isEmpty ? nil : sections[i], item: items[key.index])
        }
    }

    /// The keys, each blocked task's score lowered by ``Urgency/blockedTerm``.
    private func scoredKeys() -> [Key] {
        guard !dependencies.isEmpty else { return keys }
        var scored = keys
        let wanted = Set(dependencies.values.joined())
        let open = Set((ids + waitingIDs).filter(wanted.contains))
        for (i, deps) in dependencies where deps.contains(where: open.contains) { scored[Int(i)].score += Urgency.blockedTerm }
        return scored
    }

    /// The `n` first of `keys` in order: a full sort when `n` is a large share of them, else
    /// one pass keeping the best `n` (the `top` of a large store, without sorting it).
    private func best(_ n: Int, of keys: [Key]) -> [Key] {
        guard n > 0 else { return [] }
        guard n < keys.count / 4 else { return Array(keys.sorted(by: precedes).prefix(n)) }
        var best: [Key] = []
        best.reserveCapacity(n + 1)
        for key in keys {
            if best.count == n, !precedes(key, best[n - 1]) { continue }
            var (low, high) = (0, best.count)
            while low < high {
                let mid = (low + high) / 2
                if precedes(key, best[mid]) { high = mid } else { low = mid + 1 }
            }
            best.insert(key, at: low)
            if best.count > n { best.removeLast() }
        }
        return best
    }

    /// Higher score first, then the sooner due (none last), then the created order.
    func precedes(_ a: Key, _ b: Key) -> Bool {
        RankKey.precedes((a.score, a.dueKey, a.created), (b.score, b.dueKey, b.created), idFirst: ids[Int(a.index)] < ids[Int(b.index)])
    }
}

/// Where a ranked task goes: its score, due and created order, and its id.
struct RankKey {
    var score: Double
    var dueKey: Int64
    var created: Timestamp
    var id: TaskID

    static func precedes(_ a: RankKey, _ b: RankKey) -> Bool {
        precedes((a.score, a.dueKey, a.created), (b.score, b.dueKey, b.created), idFirst: a.id < b.id)
    }

    /// The order of ``Urgency``: higher score first, then the sooner due (none last), then
    /// the created order, then the id (`idFirst` tells whether `a`'s comes first).
    static func precedes(
        _ a: (score: Double, dueKey: Int64, created: Timestamp), _ b: (score: Double, dueKey: Int64, created: Timestamp),
        idFirst: @autoclosure () -> Bool
    ) -> Bool {
        if a.score != b.score { return a.score > b.score }
        if a.dueKey != b.dueKey { return a.dueKey < b.dueKey }
        return a.created != b.created ? a.created < b.created : idFirst()
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
    /// The open tasks of `store` ranked: every one with a section, then at most `limit`
    /// others (a store read once need not load its state).
    static func of(
        _ store: TaskStore, now: Int64, today: Int64, limit: Int, section: ((UrgencyFacts) -> TodayView.Section?)? = nil
    ) throws(StoreError) -> [Entry] {
        var sink = RankingSink(ranking: UrgencyRanking(now: now, today: today, section: section))
        try store.scanTasks(TaskQuery(status: .open), into: &sink)
        return sink.ranking.ordered(limit: limit)
    }

    /// The items of `entries`, in their order: those not at hand read from `store` (nil for
    /// one removed meanwhile).
    static func items(_ entries: [Entry], in store: TaskStore) throws(StoreError) -> [TaskItem?] {
        let missing = Set(entries.filter { $0.item == nil }.map(\.id))
        let read = missing.isEmpty ? [:] : try store.liveTasks(missing)
        return entries.map { $0.item ?? read[$0.id] }
    }
}

extension Urgency {
    /// The `n` most urgent open tasks of `store` at `now` and `today` (the local date, in
    /// days): the order of `top` and of the widget view.
    public static func top(_ n: Int, in store: TaskStore, now: Int64, today: Int64) throws(StoreError) -> [TaskItem] {
        if let planned = try topThroughPlan(n, in: store, now: now, today: today) { return planned }
        return try topOfEveryTask(n, in: store, now: now, today: today)
    }

    /// ``top(_:in:now:today:)`` by reading every open task.
    static func topOfEveryTask(_ n: Int, in store: TaskStore, now: Int64, today: Int64) throws(StoreError) -> [TaskItem] {
        let ranked = try UrgencyRanking.of(store, now: now, today: today, limit: max(0, n))
        return try UrgencyRanking.items(ranked, in: store).compactMap { $0 }
    }
}
