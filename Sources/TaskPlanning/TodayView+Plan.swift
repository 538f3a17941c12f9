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
        /// Offers a task in no section to `best`.
        func offer(_ facts: UrgencyFacts, offset: Int?, item: TaskItem?) throws(PlanFailure) {
            if sectionOf(facts) == nil, let key = try key(facts) { best.offer(PlanCandidate(key: key, offset: offset, item: item)) }
        }
        for (item, facts) in try touched() {
            if let section = joins(facts, from: .log) {
                gathered.add(facts, item, to: section, now: now, today: today)
            } else {
                try offer(facts, offset: nil, item: item)
            }
        }
        // Read the classes of the largest bonus first: the sections then gather their tasks
        // nearly in urgency order, and putting them in order moves them little.
        let lists = plan.lists.sorted { ($0.role.rawValue, Self.bonus($1)) < ($1.role.rawValue, Self.bonus($0)) }
        // An in-progress task always has a section: its lists are read whole.
        let ends = try lists.map { (list) throws(PlanFailure) in list.role == .rank && list.rankClass & 4 != 0 ? list.count : try sectionEnd(list) }
        try gathered.reserve(for: lists, ends: ends, ranking: self)
        var cursors: [PlanCursor] = []
        for (list, end) in zip(lists, ends) {
            let from: Found = list.role == .rank ? .rankList : .scheduledList
            try forEachEntry(list, 0..<end) { (facts, offset, task) throws(PlanFailure) in
                if let section = joins(facts, from: from) {
                    gathered.add(facts, task.item, to: section, now: now, today: today)
                } else if from == .rankList {
                    try offer(facts, offset: offset, item: nil)
                }
            }
            if list.role == .rank, end < list.count { cursors.append(PlanCursor(list: list, next: end)) }
        }
        try walk(&cursors, into: &best) { sectionOf($0) == nil }
        var view = try gathered.view(ranking: &self)
        for item in try items(best.kept) { view.append(item, to: .next) }
        return view
    }

    /// The largest bonus a task of `list`'s class can have: its score undated.
    static func bonus(_ list: UrgencyPlan.List) -> Double {
        UrgencyFacts(bounding: nil, rankClass: list.rankClass).score(now: 0, today: 0)!
    }

    /// How many entries of `list` from its start may hold a task of a `today` section by the
    /// date it is listed by: those dated today or earlier, or, for instants, before three days
    /// from now (a margin for a zone whose clock turns back across midnight). Undated lists: none.
    func sectionEnd(_ list: UrgencyPlan.List) throws(PlanFailure) -> Int {
        guard list.form != .none else { return 0 }
        return try count(list, upTo: list.form == .date ? today : now &+ 3 * 86_400_000 &- 1)
    }

    /// How many entries of `list` (a dated one) from its start have a value of `limit` or less.
    func count(_ list: UrgencyPlan.List, upTo limit: Int64) throws(PlanFailure) -> Int {
        var (low, high) = (0, list.count)
        while low < high {
            let mid = (low + high) / 2
            let value: Int64
            do { value = try plan.entry(list, mid).value } catch { throw .damaged("\(error)") }
            if value <= limit { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

/// The tasks of the `today` sections as they are found, section by section: each one's key
/// before the blocked term and its item, and the dependencies of those that have some.
/// Sorting moves the keys only; the items are then put in order where they lie.
struct SectionGathering {
    private struct Section {
        var keys: [RankKey] = []
        var items: [TaskItem] = []
        var dependencies: [Int: [TaskID]] = [:]

        mutating func add(_ key: RankKey, _ item: TaskItem, _ deps: [TaskID]) {
            if !deps.isEmpty { dependencies[keys.count] = deps }
            keys.append(key)
            items.append(item)
        }
    }

    /// In ``TodayView/Section`` order.
    private var sections = [Section](repeating: Section(), count: TodayView.Section.allCases.count)

    private static func slot(_ section: TodayView.Section) -> Int {
        switch section {
        case .overdue: 0
        case .dueToday: 1
        case .scheduled: 2
        case .inProgress: 3
        case .next: 4
        }
    }

    /// Makes room in each section for as many tasks as the lists read up to `ends` may give it.
    mutating func reserve(for lists: [UrgencyPlan.List], ends: [Int], ranking: PlanRanking) throws(PlanFailure) {
        var room = [Int](repeating: 0, count: sections.count)
        for (list, end) in zip(lists, ends) {
            if list.role == .scheduled {
                room[Self.slot(.scheduled)] += end
            } else if list.rankClass & 4 != 0 {
                room[Self.slot(.inProgress)] += end
            }
            if list.role == .rank, list.form != .none {
                let overdue = try ranking.count(list, upTo: list.form == .date ? ranking.today - 1 : ranking.now - 1)
                room[Self.slot(.overdue)] += overdue
                room[Self.slot(.dueToday)] += end - overdue
            }
        }
        for i in sections.indices {
            sections[i].keys.reserveCapacity(room[i])
            sections[i].items.reserveCapacity(room[i])
        }
    }

    /// Adds a task that is not waiting.
    mutating func add(_ facts: UrgencyFacts, _ item: TaskItem, to section: TodayView.Section, now: Int64, today: Int64) {
        let key = RankKey(score: facts.score(now: now, today: today)!, dueKey: facts.due?.sortKey ?? .max, created: facts.created, id: facts.id)
        sections[Self.slot(section)].add(key, item, facts.dependencies)
    }

    /// The sections, each in urgency order, blocked tasks scored down (the dependencies
    /// looked up once for all).
    mutating func view(ranking: inout PlanRanking) throws(PlanFailure) -> TodayView {
        try ranking.lookUp(sections.flatMap { $0.dependencies.values.joined() })
        var view = TodayView()
        for (i, name) in TodayView.Section.allCases.enumerated() where !sections[i].keys.isEmpty {
            var section = Section()
            swap(&section, &sections[i])  // taken, not shared: the items are put in order in place
            for (k, deps) in section.dependencies {
                if try ranking.isBlocked(deps) { section.keys[k].score += Urgency.blockedTerm }
            }
            let keys = section.keys
            section.items.permute(into: keys.indices.sorted { RankKey.precedes(keys[$0], keys[$1]) })
            view.set(section.items, for: name)
        }
        return view
    }
}

extension Array {
    /// Puts the elements in `order` (the index of the element each place gets) where they
    /// lie, moving each once: each cycle of the permutation through one held element.
    mutating func permute(into order: [Int]) {
        var done = [Bool](repeating: false, count: count)
        withUnsafeMutableBufferPointer { elements in
            guard let base = elements.baseAddress else { return }
            for start in elements.indices where !done[start] {
                let held = (base + start).move()
                var place = start
                while order[place] != start {
                    (base + place).moveInitialize(from: base + order[place], count: 1)
                    done[place] = true
                    place = order[place]
                }
                (base + place).initialize(to: held)
                done[place] = true
            }
        }
    }
}

extension TodayView {
    /// The view through the snapshot's urgency plan (``PlanRanking/through(_:now:today:_:)``).
    static func throughPlan(_ store: TaskStore, next n: Int, now: Int64, zone: some CivilZone) throws(StoreError) -> TodayView? {
        try PlanRanking.through(store, now: now, today: zone.civil(milliseconds: now).days) { (ranking) throws(PlanFailure) in
            try ranking.today(next: n, zone: zone)
        }
    }
}
