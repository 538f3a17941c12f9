import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

extension PlanRanking {
    /// The ``TodayView`` at `now` in `zone` (`today` being the local date of `now`): each
    /// section from the lists that can hold its tasks, read from their start up to the
    /// furthest entry that can (``sectionEnd(_:)``); then the `n` best of the rest, by a walk
    /// of the rank lists from there. Each task joins its section from one list only.
    mutating func today(next n: Int, zone: some CivilZone) throws(PlanFailure) -> TodayView {
        let (now, today) = (self.now, self.today)
        let sectionOf = { (f: UrgencyFacts) in TodayView.section(of: f, now: now, today: today) { zone.civil(milliseconds: $0).days } }
        var sectioned: [(facts: UrgencyFacts, section: TodayView.Section, candidate: PlanCandidate)] = []
        var best = BestCandidates(n)
        // A task joins a section from the log, or else from its rank list, or, when scheduled,
        // from its scheduled list; the rest from a rank list are offered to `best`.
        func place(_ facts: UrgencyFacts, _ candidate: PlanCandidate, from: Found) throws(PlanFailure) {
            guard !facts.isWaiting(now: now, today: today) else { return }
            guard let section = sectionOf(facts) else {
                if from != .scheduledList, let key = try key(facts) { best.offer(PlanCandidate(key: key, offset: candidate.offset, item: candidate.item)) }
                return
            }
            if from == .log || (section == .scheduled) == (from == .scheduledList) { sectioned.append((facts, section, candidate)) }
        }
        for (item, facts) in try touched() { try place(facts, PlanCandidate(key: Self.unranked, item: item), from: .log) }
        var cursors: [PlanCursor] = []
        for list in plan.lists {
            // An in-progress task always has a section: its lists are read whole.
            let end = list.role == .rank && list.rankClass & 4 != 0 ? list.count : try sectionEnd(list)
            for i in 0..<end {
                guard let (facts, offset) = try facts(list, i) else { continue }
                try place(facts, PlanCandidate(key: Self.unranked, offset: offset), from: list.role == .rank ? .rankList : .scheduledList)
            }
            if list.role == .rank, end < list.count { cursors.append(PlanCursor(list: list, next: end)) }
        }
        try walk(&cursors, into: &best) { sectionOf($0) == nil }
        var view = TodayView()
        try view.fill(sectioned, next: best.kept, ranking: &self)
        return view
    }

    /// Where a task was found.
    enum Found { case log, rankList, scheduledList }

    /// A key not worked out yet.
    static var unranked: RankKey { RankKey(score: 0, dueKey: 0, created: .zero, id: TaskID(uuidHigh: 0, low: 0)) }

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

extension TodayView {
    /// Fills the sections with `sectioned`, each in urgency order (dependencies looked up
    /// once for all), and ``next`` with `next`.
    fileprivate mutating func fill(
        _ sectioned: [(facts: UrgencyFacts, section: Section, candidate: PlanCandidate)], next: [PlanCandidate], ranking: inout PlanRanking
    ) throws(PlanFailure) {
        try ranking.lookUp(sectioned.flatMap(\.facts.dependencies))
        var bySection: [Section: [PlanCandidate]] = [:]
        for (facts, section, candidate) in sectioned {
            var c = candidate
            c.key = try ranking.key(facts)!
            bySection[section, default: []].append(c)
        }
        for section in Section.allCases where section != .next {
            let ordered = (bySection[section] ?? []).sorted { RankKey.precedes($0.key, $1.key) }
            for item in try ranking.items(ordered) { append(item, to: section) }
        }
        for item in try ranking.items(next) { append(item, to: .next) }
    }

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
