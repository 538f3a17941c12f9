import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

extension PlanRanking {
    /// Where a task was found: a task joins its section from the log, or else from its rank
    /// list, or, when scheduled, from its scheduled list.
    enum Found { case log, rankList, scheduledList }

    /// The ``TodayView`` at `now` in `zone` (`today` being the local date of `now`): each
    /// section from the lists that can hold its tasks, read from their start up to the
    /// furthest entry that can (``sectionEnd(_:)``); then the `n` best of the rest, by a walk
    /// of the rank lists from there, of which the tasks read so far were offered first.
    mutating func today(next n: Int, zone: some CivilZone) throws(PlanFailure) -> TodayView {
        let (now, today) = (self.now, self.today)
        let sectionOf = { (f: UrgencyFacts) in TodayView.section(of: f, now: now, today: today) { zone.civil(milliseconds: $0).days } }
        /// The section a task joins from where it was found, if any.
        func joins(_ f: UrgencyFacts, from: Found) -> TodayView.Section? {
            guard !f.isWaiting(now: now, today: today), let section = sectionOf(f) else { return nil }
            return from == .log || (section == .scheduled) == (from == .scheduledList) ? section : nil
        }
        var gathered = SectionGathering()
        var best = BestCandidates(n)
        func place(_ facts: UrgencyFacts, offset: Int?, item: TaskItem?, from: Found) throws(PlanFailure) {
            if let section = joins(facts, from: from) {
                gathered.add(facts, item!, to: section, now: now, today: today)
            } else if from != .scheduledList, sectionOf(facts) == nil, let key = try key(facts) {
                best.offer(PlanCandidate(key: key, offset: offset, item: offset == nil ? item : nil))
            }
        }
        for (item, facts) in try touched() { try place(facts, offset: nil, item: item, from: .log) }
        var cursors: [PlanCursor] = []
        for list in plan.lists {
            let from: Found = list.role == .rank ? .rankList : .scheduledList
            // An in-progress task always has a section: its lists are read whole.
            let end = list.role == .rank && list.rankClass & 4 != 0 ? list.count : try sectionEnd(list)
            for i in 0..<end {
                guard let entry = try facts(list, i, itemIf: { joins($0, from: from) != nil }) else { continue }
                try place(entry.facts, offset: entry.offset, item: entry.item, from: from)
            }
            if list.role == .rank, end < list.count { cursors.append(PlanCursor(list: list, next: end)) }
        }
        try walk(&cursors, into: &best) { sectionOf($0) == nil }
        var view = try gathered.view(ranking: &self)
        for item in try items(best.kept) { view.append(item, to: .next) }
        return view
    }

    /// How many entries of `list` from its start may hold a task of a `today` section by the
    /// date it is listed by: those dated today or earlier, or, for instants, before three days
    /// from now (a margin for a zone whose clock turns back across midnight). Undated lists: none.
    func sectionEnd(_ list: UrgencyPlan.List) throws(PlanFailure) -> Int {
        guard list.form != .none else { return 0 }
        let limit = list.form == .date ? today : now &+ 3 * 86_400_000 &- 1
        var (low, high) = (0, list.count)
        while low < high {
            let mid = (low + high) / 2
            let value: Int64
            do { value = try plan.value(list, mid) } catch { throw .damaged("\(error)") }
            if value <= limit { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

/// The tasks of the `today` sections as they are found: each one's key before the blocked
/// term, its section and its item, and the dependencies of those that have some. Sorting
/// moves the keys only.
struct SectionGathering {
    private var keys: [RankKey] = []
    private var sections: [TodayView.Section] = []
    private var items: [TaskItem] = []
    private var dependencies: [Int: [TaskID]] = [:]

    /// Adds a task that is not waiting.
    mutating func add(_ facts: UrgencyFacts, _ item: TaskItem, to section: TodayView.Section, now: Int64, today: Int64) {
        let score = facts.score(now: now, today: today)!
        if !facts.dependencies.isEmpty { dependencies[keys.count] = facts.dependencies }
        keys.append(RankKey(score: score, dueKey: facts.due?.sortKey ?? .max, created: facts.created, id: facts.id))
        sections.append(section)
        items.append(item)
    }

    /// The sections, each in urgency order, blocked tasks scored down (the dependencies
    /// looked up once for all).
    func view(ranking: inout PlanRanking) throws(PlanFailure) -> TodayView {
        var keys = keys
        try ranking.lookUp(dependencies.values.joined())
        for (i, deps) in dependencies {
            if try ranking.isBlocked(deps) { keys[i].score += Urgency.blockedTerm }
        }
        var view = TodayView()
        for i in keys.indices.sorted(by: { RankKey.precedes(keys[$0], keys[$1]) }) { view.append(items[i], to: sections[i]) }
        return view
    }
}

extension TodayView {
    /// The view through the snapshot's urgency plan; nil when it cannot be built so (no
    /// usable snapshot), or the plan turned out damaged (it is then removed, and the next
    /// ranking builds it anew).
    static func throughPlan(_ store: TaskStore, next n: Int, now: Int64, zone: some CivilZone) throws(StoreError) -> TodayView? {
        do {
            guard var ranking = try PlanRanking(store, now: now, today: zone.civil(milliseconds: now).days) else { return nil }
            return try ranking.today(next: n, zone: zone)
        } catch {
            switch error {
            case .store(let e): throw e
            case .damaged:
                store.discardUrgencyPlan()
                return nil
            }
        }
    }
}
